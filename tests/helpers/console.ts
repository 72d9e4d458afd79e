import { mkdtemp, rm } from 'fs/promises'
import { tmpdir } from 'os'
import { join } from 'path'
import { freePort } from './wait'
import { App, Dict } from 'koishi'
import WebSocket from 'ws'
import server from '@koishijs/plugin-server'
import console from '@koishijs/plugin-console'
import mock from '@koishijs/plugin-mock'
import memory from '@koishijs/plugin-database-memory'
import auth from '@koishijs/plugin-auth'
import * as tools from '../../src'

export { freePort }

export interface ConsoleApp {
  app: App
  port: number
  /** `http://127.0.0.1:<port>/` */
  url: string
  baseDir: string
  dispose(): Promise<void>
}

export interface ConsoleAppOptions {
  /** This plugin's module: `src` by default; the browser test passes the installed copy. */
  plugin?: any
  /** Plugin config. */
  config?: Dict
  /** Load `@koishijs/plugin-auth` (console logins); needs the database, which is always loaded. */
  auth?: { admin?: { enabled: boolean; password?: string } }
  /** More plugins to load before this one: `[plugin, config]`. */
  plugins?: [any, any?][]
  locale?: string
}

/**
 * A real Koishi app serving the console on a free port: server, console
 * (production mode: built pages only), the mock adapter, the in-memory
 * database, optionally plugin-auth, and this plugin.
 */
export async function createConsoleApp(options: ConsoleAppOptions = {}): Promise<ConsoleApp> {
  const baseDir = await mkdtemp(join(tmpdir(), 'chatluna-tools-console-'))
  const port = await freePort()
  const locales = options.locale === 'en-US' ? ['en-US', 'zh-CN'] : ['zh-CN', 'en-US']
  const app = new App({ i18n: { locales } } as any)
  app.baseDir = baseDir
  app.plugin(server, { host: '127.0.0.1', port })
  app.plugin(console, { open: false, devMode: false })
  app.plugin(mock)
  app.plugin(memory)
  if (options.auth) app.plugin(auth, options.auth)
  for (const [plugin, config] of options.plugins ?? []) app.plugin(plugin, config)
  app.plugin(options.plugin ?? tools, options.config ?? {})
  await app.start()
  return {
    app,
    port,
    url: `http://127.0.0.1:${port}/`,
    baseDir,
    async dispose() {
      // Stop the HTTP server while the logger it reports to still exists.
      app.registry.delete(server)
      app.registry.delete(mock)
      await app.stop()
      await rm(baseDir, { recursive: true, force: true })
    },
  }
}

/**
 * A console client speaking the console's WebSocket protocol (what the page
 * does): `send` a listener call and await its response; `data` holds the
 * latest value of each data service.
 */
export class ConsoleSocket {
  readonly data: Dict = {}
  private socket: WebSocket
  private waiting = new Map<string, [(value: any) => void, (error: any) => void]>()
  private watchers = new Set<() => void>()
  private counter = 0

  static async connect(port: number, path = '/status') {
    const client = new ConsoleSocket()
    client.socket = new WebSocket(`ws://127.0.0.1:${port}${path}`)
    client.socket.on('message', (raw) => client.receive(JSON.parse(raw.toString())))
    await new Promise((resolve, reject) => {
      client.socket.once('open', resolve)
      client.socket.once('error', reject)
    })
    return client
  }

  private receive({ type, body }: { type: string; body: any }) {
    if (type === 'response') {
      const hooks = this.waiting.get(body.id)
      if (!hooks) return
      this.waiting.delete(body.id)
      if (body.error) hooks[1](new Error(String(body.error)))
      else hooks[0](body.value)
    } else if (type === 'data') {
      this.data[body.key] = body.value
    }
    for (const watcher of this.watchers) watcher()
  }

  /** Calls a listener; rejects with the console's error text. */
  send<T = any>(type: string, ...args: any[]): Promise<T> {
    const id = `t${++this.counter}`
    this.socket.send(JSON.stringify({ type, args, id }))
    return new Promise((resolve, reject) => this.waiting.set(id, [resolve, reject]))
  }

  /** Resolves when `predicate(data[key])` holds (checked on every message), or rejects after `timeout` ms. */
  until(key: string, predicate: (value: any) => boolean, timeout = 5000): Promise<any> {
    return new Promise((resolve, reject) => {
      const check = () => {
        let ok = false
        try {
          ok = predicate(this.data[key])
        } catch {}
        if (!ok) return
        this.watchers.delete(check)
        clearTimeout(timer)
        resolve(this.data[key])
      }
      const timer = setTimeout(() => {
        this.watchers.delete(check)
        reject(new Error(`data "${key}" did not reach the expected state: ${JSON.stringify(this.data[key])?.slice(0, 500)}`))
      }, timeout)
      this.watchers.add(check)
      check()
    })
  }

  close() {
    this.socket.close()
  }
}
