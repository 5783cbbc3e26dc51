// Dataset summary webview script: only posts messages to the extension, which validates them.
(function () {
  const vscode = acquireVsCodeApi();
  const on = (id, fn) => {
    const el = document.getElementById(id);
    if (el) el.addEventListener('click', fn);
  };
  on('refresh', () => vscode.postMessage({ type: 'refresh' }));
  on('review', () => vscode.postMessage({ type: 'startReview' }));
  on('export', () => {
    const select = document.getElementById('format');
    vscode.postMessage({ type: 'export', format: select ? select.value : 'trl-sft' });
  });
  vscode.postMessage({ type: 'ready' });
})();
