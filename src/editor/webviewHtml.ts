// Helpers shared by our webview pages (score view, dataset summary). No vscode import.
import { randomBytes } from 'node:crypto';

/** Escapes text for HTML element content and quoted attribute values. */
export function escapeHtml(s: string): string {
  return s.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);
}

/** A fresh CSP nonce for one page render. */
export function newNonce(): string {
  return randomBytes(16).toString('base64');
}

/** What a webview page of ours links to: its CSP source, the script nonce, and its media files. */
export interface WebviewPageResources {
  cspSource: string;
  nonce: string;
  styleUri: string;
  scriptUri: string;
}

/** The document's start up to `</head>`: the CSP, the stylesheet, the title. */
export function pageHead(res: Pick<WebviewPageResources, 'styleUri'>, csp: string, title: string): string {
  return `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="UTF-8">
<meta http-equiv="Content-Security-Policy" content="${csp}">
<meta name="viewport" content="width=device-width, initial-scale=1.0">
<link rel="stylesheet" href="${escapeHtml(res.styleUri)}">
<title>${escapeHtml(title)}</title>
</head>`;
}
