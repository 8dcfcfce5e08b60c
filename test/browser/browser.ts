import { existsSync, mkdirSync } from 'node:fs'
import path from 'node:path'
import { type Browser, chromium, type Page } from 'playwright-core'

/** Debian's Chromium; `.ci/run` installs it when it is missing. */
export const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium'

export function launch(): Promise<Browser> {
  if (!existsSync(CHROMIUM)) throw new Error(`no Chromium at ${CHROMIUM}: apt-get install -y chromium`)
  // the sandbox needs user namespaces, which CI containers running as root do not give
  return chromium.launch({ executablePath: CHROMIUM, headless: true, args: ['--no-sandbox'] })
}

/**
 * Saves a screenshot of the page as docs/screenshots/<name>.png when SCREENSHOTS is set (to
 * refresh the committed ones: `SCREENSHOTS=1 npx vitest run test/browser`); otherwise nothing.
 */
export async function screenshot(page: Page, name: string): Promise<void> {
  if (!process.env.SCREENSHOTS) return
  const dir = path.resolve('docs/screenshots')
  mkdirSync(dir, { recursive: true })
  await page.screenshot({ path: path.join(dir, `${name}.png`), fullPage: true })
}

/** Collects what the page's console says is wrong: CSP refusals, script errors. */
export function consoleErrors(page: Page): string[] {
  const errors: string[] = []
  page.on('console', (m) => {
    if (m.type() === 'error') errors.push(m.text())
  })
  page.on('pageerror', (e) => errors.push(e.message))
  return errors
}
