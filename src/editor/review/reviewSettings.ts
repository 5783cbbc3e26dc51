// Settings the review features read, through the editor's own settings module: the dataset
// folder and the reviewer id are resolved exactly as for episodes; the tag taxonomy is ours.
import * as vscode from 'vscode';
import { datasetFolder, readSettings } from '../settings';
import { annotatorId } from '../settingsSchema';
import { tagsFromSetting } from './core/labelForm';

export function datasetFolderSetting(context: vscode.ExtensionContext): string {
  return datasetFolder(readSettings().settings, context);
}

/** Reviewer / labeler id: the annotator id setting, else the OS user name. */
export function reviewerSetting(): string {
  return annotatorId(readSettings().settings);
}

export function labelTagsSetting(): string[] {
  return tagsFromSetting(vscode.workspace.getConfiguration('forgeenv.labels').get('tags'));
}
