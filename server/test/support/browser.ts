import type http from 'node:http';
import { type Browser, type BrowserContext, chromium, type Page } from 'playwright-core';
import { serveApp } from '../../src/serve';
import { ensureBuilt } from '../startup/builtServer';
import type { Harness } from './harness';

/**
 * Debian's Chromium against a harness's app listening on 127.0.0.1: the pages and browser files
 * the server serves from the build (scripts/build.mjs), the API they call for real. Pages
 * collect what they print as errors (a CSP refusal, a script error) for the test to check.
 */
export interface BrowserWorld {
  origin: string;
  browser: Browser;
  /** Errors the pages printed since the last `takeErrors()`. */
  takeErrors(): string[];
  /** A new browser context (its own cookies), in a language and at a width; a phone's touch. */
  newContext(options?: {
    width?: number;
    locale?: 'vi' | 'en';
    touch?: boolean;
  }): Promise<BrowserContext>;
  newPage(context?: BrowserContext): Promise<Page>;
  close(): Promise<void>;
}

export async function openBrowserWorld(h: Harness): Promise<BrowserWorld> {
  ensureBuilt();
  let server: http.Server | undefined;
  const port = await new Promise<number>((resolve) => {
    server = serveApp(
      h.app.fetch,
      { hostname: '127.0.0.1', port: 0, logger: h.deps.logger },
      (info) => resolve(info.port),
    );
  });
  const origin = `http://127.0.0.1:${port}`;
  const browser = await chromium.launch({ executablePath: '/usr/bin/chromium' });
  const errors: string[] = [];
  const watch = (page: Page) => {
    page.on('console', (message) => {
      const text = message.text();
      if (message.type() === 'error' && !text.startsWith('Failed to load resource')) {
        errors.push(text);
      }
    });
    page.on('pageerror', (error) => errors.push(error.message));
    // A renderer that dies leaves a blank page whose elements a test then waits for in vain:
    // say so where the test's output shows it.
    page.on('crash', () => process.stderr.write(`Chromium's renderer crashed on ${page.url()}\n`));
  };
  return {
    origin,
    browser,
    takeErrors: () => errors.splice(0),
    newContext: async (options = {}) => {
      const context = await browser.newContext({
        viewport: { width: options.width ?? 1280, height: 900 },
        locale: options.locale === 'en' ? 'en-GB' : 'vi-VN',
        timezoneId: 'Asia/Ho_Chi_Minh',
        ...(options.touch ? { hasTouch: true, isMobile: true } : {}),
      });
      context.on('page', watch);
      return context;
    },
    newPage: async (context) => {
      const page = context ? await context.newPage() : await browser.newPage();
      if (!context) watch(page);
      return page;
    },
    close: async () => {
      await browser.close();
      await new Promise((resolve) => (server ? server.close(resolve) : resolve(undefined)));
    },
  };
}

/** Signs in through the real sign-in page; the page ends on the dashboard. */
export async function signInThroughPage(
  world: BrowserWorld,
  page: Page,
  username: string,
  password: string,
): Promise<void> {
  await page.goto(`${world.origin}/app/dang-nhap`);
  await page.fill('#username', username);
  await page.fill('#password', password);
  await Promise.all([page.waitForURL(/\/app\/dashboard/), page.click('button[type=submit]')]);
}
