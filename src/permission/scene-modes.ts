import { Context } from 'koishi'
import { isPermissionMode, PermissionMode } from './modes'

type Database = Context['database']

/**
 * Modes set for one channel with `tools.mode <mode>` (issue 3, item 10):
 * one of the layers of `modeOf`. Kept in the table
 * `chatluna_tools_scene_mode` when a database is loaded, else in memory.
 */
export class SceneModeStore {
  private modes = new Map<string, PermissionMode>()
  private database?: Database

  private static key(platform: string, channelId: string) {
    return `${platform}\u0000${channelId}`
  }

  /** The mode set for a channel, if any. */
  get(platform: string | undefined, channelId: string | undefined): PermissionMode | undefined {
    if (!platform || !channelId || !this.modes.size) return
    return this.modes.get(SceneModeStore.key(platform, channelId))
  }

  /** Sets (or with `undefined` clears) the mode of a channel. */
  async set(platform: string, channelId: string, mode: PermissionMode | undefined, updatedBy?: string) {
    if (mode !== undefined && !isPermissionMode(mode)) throw new TypeError(`unknown permission mode ${JSON.stringify(mode)}`)
    if (this.database) {
      if (mode) {
        await this.database.upsert('chatluna_tools_scene_mode', [{ platform, channelId, mode, updatedAt: new Date(), updatedBy: updatedBy ?? '' }])
      } else {
        await this.database.remove('chatluna_tools_scene_mode', { platform, channelId })
      }
    }
    const key = SceneModeStore.key(platform, channelId)
    if (mode) this.modes.set(key, mode)
    else this.modes.delete(key)
  }

  /** Loads the stored modes and writes those set before the database came. */
  async attach(database: Database) {
    const rows = await database.get('chatluna_tools_scene_mode', {})
    const stored = new Set(rows.map((row) => SceneModeStore.key(row.platform, row.channelId)))
    const unsaved = [...this.modes].filter(([key]) => !stored.has(key))
    if (unsaved.length) {
      await database.upsert('chatluna_tools_scene_mode', unsaved.map(([key, mode]) => {
        const [platform, channelId] = key.split('\u0000')
        return { platform, channelId, mode, updatedAt: new Date(), updatedBy: '' }
      }))
    }
    for (const row of rows) {
      if (isPermissionMode(row.mode)) this.modes.set(SceneModeStore.key(row.platform, row.channelId), row.mode)
    }
    this.database = database
  }

  /** Stops using the database; the modes stay in memory. */
  detach() {
    this.database = undefined
  }
}
