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
