import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { serveStatic } from '@hono/node-server/serve-static';
import type { Hono } from 'hono';
import { secureHeaders } from 'hono/secure-headers';
import type { Env } from 'hono/types';

/** Where the dashboard's built page comes from. */
export interface DashboardOptions {
  /**
   * The folder `vite build --config dashboard/vite.config.ts` wrote (it holds `index.html` and `assets/`).
   * @default `dist/dashboard` of the installed package (next to the compiled server)
   */
  readonly assetsDir?: string;
}

/** The URL path every asset of the page is served under (the Vite `base`). */
export const dashboardBase = '/dashboard/';

/**
 * Headers of the page and its assets: a Content-Security-Policy that lets it load and call only its own origin
 * (an injected script could read the token in sessionStorage), no framing, no referrer. No HSTS: the server may
 * well be plain HTTP on loopback.
 */
const pageHeaders = secureHeaders({
  contentSecurityPolicy: {
    defaultSrc: ["'self'"],
    scriptSrc: ["'self'"],
    styleSrc: ["'self'"],
    imgSrc: ["'self'", 'data:'],
    connectSrc: ["'self'"],
    objectSrc: ["'none'"],
    baseUri: ["'none'"],
    formAction: ["'self'"],
    frameAncestors: ["'none'"],
  },
  strictTransportSecurity: false,
});

/** Candidate folders of the built page: beside the compiled module (`dist/dashboard`), or the build output when run from source. */
function defaultAssetsDirs(): string[] {
  return [
    fileURLToPath(new URL('../../dashboard/', import.meta.url)),
    fileURLToPath(new URL('../../../dist/dashboard/', import.meta.url)),
  ];
}

/** The first folder holding a built `index.html`, if any. */
export function findDashboardAssets(options: DashboardOptions = {}): string | undefined {
  const candidates = options.assetsDir === undefined ? defaultAssetsDirs() : [options.assetsDir];
  return candidates.find((dir) => existsSync(`${dir}/index.html`));
}

/**
 * Add the dashboard to a Hono app: `GET /` answers the page and `GET /dashboard/*` its scripts and styles. Both
 * are public static files; every piece of data the page shows comes from the bearer-protected `/v1` routes.
 */
export function mountDashboard<E extends Env>(app: Hono<E>, options: DashboardOptions = {}): void {
  const root = findDashboardAssets(options);
  if (root === undefined) {
    const missing =
      'The dashboard is not built: run `npm run build` (vite build --config dashboard/vite.config.ts).';
    app.get('/', (c) => c.text(missing, 404));
    return;
  }
  app.get('/', pageHeaders, serveStatic({ root, path: 'index.html' }));
  app.get(
    `${dashboardBase}*`,
    pageHeaders,
    serveStatic({ root, rewriteRequestPath: (path) => path.slice(dashboardBase.length - 1) }),
  );
}
