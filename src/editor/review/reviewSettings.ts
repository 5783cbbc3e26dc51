// Settings the review features read: the dataset folder, who is reviewing/labeling, the tag
// taxonomy. Same keys as the editor's episode features.
import { userInfo } from 'node:os';
import * as vscode from 'vscode';
import { forgeSettings, resolveSettingPath } from '../lab/labSettings';
import { tagsFromSetting } from './core/labelForm';

/** The dataset folder, resolved; undefined when not set and no workspace folder to default into. */
export function datasetFolderSetting(): string | undefined {
  const v = forgeSettings().datasetFolder;
  if (v) return resolveSettingPath(v);
  const root = vscode.workspace.workspaceFolders?.[0]?.uri.fsPath;
  return root ? resolveSettingPath('.forgeenv/dataset') : undefined;
}

/** Reviewer / labeler id: the annotator setting, else the OS user name. */
export function reviewerSetting(): string {
  const v = forgeSettings().annotatorId;
  if (v) return v;
  try {
    return userInfo().username || 'anonymous';
  } catch {
    return 'anonymous';
  }
}

export function labelTagsSetting(): string[] {
  return tagsFromSetting(vscode.workspace.getConfiguration('forgeenv.labels').get('tags'));
}
