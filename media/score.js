// Score view script (loaded with the page's nonce). It only forwards button presses to the
// extension, which validates every message; it never evaluates anything it receives.
(function () {
  const vscode = acquireVsCodeApi();
  for (const el of document.querySelectorAll('.fill[data-fill]')) {
    const pct = Number(el.getAttribute('data-fill'));
    if (Number.isFinite(pct)) el.style.width = Math.max(0, Math.min(100, pct)) + '%';
  }
  document.addEventListener('click', (event) => {
    const target = event.target instanceof Element ? event.target.closest('button[data-action]') : null;
    if (!target || target.disabled) return;
    vscode.postMessage({ type: target.getAttribute('data-action') });
  });
  vscode.postMessage({ type: 'ready' });
})();
