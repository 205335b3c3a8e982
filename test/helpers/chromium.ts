import { existsSync } from "node:fs";
import { type Browser, chromium, type Page } from "playwright-core";

/** Debian's Chromium (`apt install chromium`), the browser the dashboard tests drive; undefined when absent. */
export const CHROMIUM = ["/usr/bin/chromium", "/usr/bin/chromium-browser"].find((p) => existsSync(p));

/** Headless Chromium with one page open, collecting the page's uncaught errors; close `browser` when done. */
export async function openPage(viewport?: { width: number; height: number }): Promise<{ browser: Browser; page: Page; errors: string[] }> {
  if (!CHROMIUM) throw new Error("no /usr/bin/chromium (apt install chromium)");
  const browser = await chromium.launch({ executablePath: CHROMIUM, args: ["--no-sandbox"] });
  const page = await browser.newPage(viewport ? { viewport } : {});
  const errors: string[] = [];
  page.on("pageerror", (e) => errors.push(e.message));
  return { browser, page, errors };
}
