// Score view script (loaded with the page's nonce). It forwards button presses to the extension
// (which validates every message) and swaps in updated content the extension renders and
// escapes; it never evaluates anything it receives.
(function () {
  const vscode = acquireVsCodeApi();
  const root = document.getElementById('root');

  function applyBars() {
    for (const el of document.querySelectorAll('.fill[data-fill]')) {
      const pct = Number(el.getAttribute('data-fill'));
      if (Number.isFinite(pct)) el.style.width = Math.max(0, Math.min(100, pct)) + '%';
    }
  }

  document.addEventListener('click', (event) => {
    const target = event.target instanceof Element ? event.target.closest('button[data-action]') : null;
    if (!target || target.disabled) return;
    vscode.postMessage({ type: target.getAttribute('data-action') });
  });

  window.addEventListener('message', (event) => {
    const m = event.data;
    if (!m || m.type !== 'render' || typeof m.body !== 'string' || !root) return;
    // Keep keyboard focus on the same action across the update.
    const focused = document.activeElement instanceof Element ? document.activeElement.getAttribute('data-action') : null;
    root.innerHTML = m.body;
    root.setAttribute('aria-busy', m.busy ? 'true' : 'false');
    applyBars();
    if (focused) {
      const again = root.querySelector('button[data-action="' + focused + '"]');
      if (again && !again.disabled) again.focus();
    }
  });

  applyBars();
  vscode.postMessage({ type: 'ready' });
})();
