import { existsSync, mkdirSync } from 'fs'
import { join } from 'path'
import { chromium, Page } from 'playwright-core'
import { ConsoleApp, ConsoleAppOptions, createConsoleApp } from './console'
import { root, stagePackage } from './stage'

// Headless Chromium for the console page tests: Debian's chromium driven by
// playwright-core (no browser download).

export const chromiumPath = process.env.CHROMIUM_PATH || '/usr/bin/chromium'

export const chromiumArgs = [
  '--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
  '--disable-background-networking', '--disable-component-update', '--disable-sync',
]

/** Throws a clear error when Chromium is not installed. */
export function assertChromium() {
  if (!existsSync(chromiumPath)) {
    throw new Error(`Chromium not found at ${chromiumPath}: install Debian's chromium (\`.ci/run\` does) or set CHROMIUM_PATH`)
  }
}

/** Opens a fresh Chromium profile with the console set to `locale`. */
export async function openBrowser(userDataDir: string, locale: string) {
  const context = await chromium.launchPersistentContext(userDataDir, {
    executablePath: chromiumPath,
    headless: true,
    args: chromiumArgs,
    viewport: { width: 1440, height: 900 },
  })
  context.setDefaultTimeout(10000)
  await context.addInitScript((value) => {
    if (!localStorage.getItem('koishi.console.config')) {
      localStorage.setItem('koishi.console.config', JSON.stringify({ locale: value }))
    }
  }, locale)
  return context
}

/** Picks an option of an element-plus select (its dropdown is teleported to the body). */
export async function choose(page: Page, select: string, option: string) {
  await page.locator(select).click()
  await page.locator('.el-select-dropdown__item:visible', { hasText: new RegExp(`^\\s*${option}\\s*$`) }).click()
}

/** The active entry of a tool in the page's tool list. */
export const toolItem = (page: Page, name: string) => page.locator(`.tool-item[data-tool="${name}"][data-active="true"]`)

/** Where the console browser tests save their screenshots. */
export const screenshots = join(root, 'tests/output/console')

/**
 * A console app for a browser test, with this plugin installed as from npm
 * (its built page is what the browser gets): checks that Chromium is there
 * and that the screenshots folder exists first.
 */
export async function createPageApp(options: Omit<ConsoleAppOptions, 'plugin'>): Promise<ConsoleApp> {
  assertChromium()
  mkdirSync(screenshots, { recursive: true })
  const folder = stagePackage(join(root, 'tests/output/stage'))
  return createConsoleApp({ ...options, plugin: require(folder) })
}
