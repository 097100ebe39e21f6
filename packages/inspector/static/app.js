// The page's router: `/` lists the sessions, `/s/<session>` shows one. Links marked data-nav stay in the page.
import { renderSessionPage } from './session-page.js';
import { renderSessionsPage } from './sessions-page.js';

const app = document.getElementById('app');
let current = null;

function route() {
  current?.stop();
  app.replaceChildren();
  const match = /^\/s\/([^/]+)\/?$/.exec(location.pathname);
  current = match === null ? renderSessionsPage(app, navigate) : renderSessionPage(app, decodeURIComponent(match[1]), navigate);
}

export function navigate(path) {
  if (path !== location.pathname) history.pushState(null, '', path);
  route();
}

document.addEventListener('click', (event) => {
  const link = event.target.closest?.('a[data-nav]');
  if (link === null || link === undefined || event.ctrlKey || event.metaKey || event.button !== 0) return;
  event.preventDefault();
  navigate(link.getAttribute('href'));
});
window.addEventListener('popstate', route);
route();
