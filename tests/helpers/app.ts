import { mkdtemp, rm } from 'fs/promises'
import { tmpdir } from 'os'
import { join } from 'path'
import { App, Dict, HTTP } from 'koishi'
import mock from '@koishijs/plugin-mock'
import memory from '@koishijs/plugin-database-memory'
import * as tools from '../../src'

export interface TestApp {
  app: App
  baseDir: string
  /** Stops the app and removes its base dir. */
  dispose(): Promise<void>
}

/**
 * A real Koishi app with the mock adapter and this plugin, in a fresh temp
 * base dir. `database: true` adds the in-memory database (users get
 * authorities); `locale` sets the app's first locale; `http: true` adds
 * Koishi's HTTP client (`ctx.http`, needed by the agent).
 */
export async function createApp(config: Dict = {}, options: { database?: boolean; locale?: string; http?: boolean } = {}): Promise<TestApp> {
  const baseDir = await mkdtemp(join(tmpdir(), 'chatluna-tools-test-'))
  const app = new App({ i18n: { locales: options.locale === 'en-US' ? ['en-US', 'zh-CN'] : ['zh-CN', 'en-US'] } } as any)
  app.baseDir = baseDir
  app.plugin(mock)
  if (options.database) app.plugin(memory)
  if (options.http) app.plugin(HTTP)
  app.plugin(tools, config)
  await app.start()
  return {
    app,
    baseDir,
    async dispose() {
      app.registry.delete(mock)
      await app.stop()
      await rm(baseDir, { recursive: true, force: true })
    },
  }
}

/** Config that leaves only the built-in `read` tool on (for specs about the pipeline itself). */
export const onlyRead = {
  write: { enabled: false },
  edit: { enabled: false },
  bash: { enabled: false },
  skills: { enabled: false },
}

/** Config without any built-in tool. */
export const noBuiltins = { ...onlyRead, read: { enabled: false } }

/** A named test plugin that injects `tools`, as a real plugin would. */
export function toolPlugin(name: string, apply: (ctx: import('koishi').Context) => void) {
  return { name, inject: ['tools'], apply }
}
