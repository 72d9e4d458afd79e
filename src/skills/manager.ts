import { existsSync, FSWatcher, watch } from 'fs'
import { dirname } from 'path'
import { Logger } from 'koishi'
import { localeIds, locales } from '../locales'
import { pickDescription } from '../schema/schemastery'
import { OwnerStates } from '../visibility/owners'
import { loadSkillDirectory, Skill, SkillDirectory, SkillWarning } from './loader'

const logger = new Logger('chatluna-tools')

/** Where the manager looks for skills: absolute directories, local first. */
export interface SkillSources {
  localDirs: string[]
  globalDirs: string[]
}

/** A skill as listed: the skill and whether it is switched on. */
export interface SkillInfo extends Skill {
  enabled: boolean
}

/** Why a skill name resolves the way it does (`ctx.tools.skills.explain`). */
export interface SkillExplanation {
  name: string
  /** The skill the `skill` tool returns for this name. */
  active?: Skill
  /** Skills of the same name that lose to it: later local dirs, then global dirs. */
  shadowed: Skill[]
  enabled: boolean
}

/** Wait after the last file change before reloading, in ms. */
export const reloadDelay = 100

/** The owner of a skill for visibility layer 5. */
export function skillOwner(name: string) {
  return { kind: 'skill', id: name }
}

/**
 * The skill system, `ctx.tools.skills` (issue "Built-in tools", item 7):
 * `SKILL.md` files in local and global directories, `<dir>/<skill>/SKILL.md`.
 * Local dirs win over global ones, earlier dirs over later ones; the losers
 * are kept as shadowed for {@link explain}. Each directory has an FNV-1a
 * fingerprint over its files' paths, sizes and mtimes, so an unchanged
 * directory is not parsed again; a file watcher reloads changed ones after
 * {@link reloadDelay} ms. A malformed skill is skipped with a warning.
 * Skills are switched off one by one through visibility layer 5 (owner
 * `{ kind: 'skill', id: name }`): a disabled skill is left out of the
 * catalog and refused by the `skill` tool.
 */
export class SkillManager {
  private directories = new Map<string, SkillDirectory>()
  private active = new Map<string, Skill>()
  private shadowed = new Map<string, Skill[]>()
  private loading?: Promise<boolean>
  private again = false
  private warned = new Set<string>()

  constructor(private sources: () => SkillSources, private owners: OwnerStates, private onChange: () => void = () => {}) {}

  /**
   * Rescans every directory (only changed ones are parsed) and rebuilds the
   * table. Resolves to whether any skill changed. Concurrent calls share
   * one scan; a call during a scan schedules one more.
   */
  refresh(): Promise<boolean> {
    if (this.loading) {
      this.again = true
      return this.loading
    }
    const run = async (): Promise<boolean> => {
      let changed = false
      do {
        this.again = false
        changed = (await this.scan()) || changed
      } while (this.again)
      return changed
    }
    this.loading = run().finally(() => this.loading = undefined)
    return this.loading
  }

  private async scan(): Promise<boolean> {
    const { localDirs, globalDirs } = this.sources()
    const dirs = [...localDirs.map((dir) => [dir, 'local'] as const), ...globalDirs.map((dir) => [dir, 'global'] as const)]
    const next = new Map<string, SkillDirectory>()
    let changed = dirs.length !== this.directories.size
    for (const [dir, scope] of dirs) {
      const key = `${scope}:${dir}`
      const previous = this.directories.get(key)
      const loaded = await loadSkillDirectory(dir, scope, previous)
      if (loaded !== previous) changed = true
      next.set(key, loaded)
      this.report(loaded.warnings)
    }
    this.directories = next
    if (changed) {
      this.rebuild([...next.values()])
      this.onChange()
    }
    return changed
  }

  private report(warnings: SkillWarning[]) {
    for (const warning of warnings) {
      const key = `${warning.file}\0${warning.reason}`
      if (this.warned.has(key)) continue
      this.warned.add(key)
      logger.warn('skipped skill %s: %s', warning.file, warning.reason)
    }
  }

  private rebuild(directories: SkillDirectory[]) {
    this.active = new Map()
    this.shadowed = new Map()
    for (const directory of directories) {
      for (const skill of directory.skills) {
        if (!this.active.has(skill.name)) {
          this.active.set(skill.name, skill)
        } else {
          if (!this.shadowed.has(skill.name)) this.shadowed.set(skill.name, [])
          this.shadowed.get(skill.name)!.push(skill)
        }
      }
    }
  }

  /** The active skills (one per name), sorted by name, with their enabled state. */
  list(): SkillInfo[] {
    return [...this.active.values()]
      .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))
      .map((skill) => ({ ...skill, enabled: this.isEnabled(skill.name) }))
  }

  /** The active skill of that name (case-insensitive when there is no exact match), enabled or not. */
  get(name: string): Skill | undefined {
    if (typeof name !== 'string') return undefined
    const exact = this.active.get(name)
    if (exact) return exact
    const lower = name.toLowerCase()
    return [...this.active.values()].find((skill) => skill.name.toLowerCase() === lower)
  }

  /** Which skill a name resolves to, which ones it shadows, and whether it is enabled. */
  explain(name: string): SkillExplanation {
    const active = this.get(name)
    const key = active?.name ?? name
    return { name: key, active, shadowed: [...this.shadowed.get(key) ?? []], enabled: this.isEnabled(key) }
  }

  /** Skills that could not be loaded, by file. */
  warnings(): SkillWarning[] {
    return [...this.directories.values()].flatMap((directory) => directory.warnings)
  }

  /** Whether a skill is switched on (visibility layer 5): on unless switched off, also for a name no skill has yet. */
  isEnabled(name: string) {
    return this.owners.isEnabled(skillOwner(name))
  }

  /** Switches a skill on or off (visibility layer 5). */
  setEnabled(name: string, enabled: boolean) {
    this.owners.setEnabled(skillOwner(name), enabled)
  }

  /**
   * The catalog of enabled skills for a system prompt, in a locale
   * (`zh-CN`, `en-US`; default English): a header line, then
   * `- name: description` per skill; a sentence saying there are none
   * when there are none.
   */
  catalog(locale?: string): string {
    const text = (key: string) => pickDescription(
      Object.fromEntries(localeIds.map((id) => [id, locales[id]['chatluna-tools']?.skills?.[key]])),
      [locale, 'en-US'].filter(Boolean),
    ) ?? ''
    const skills = this.list().filter((skill) => skill.enabled)
    if (!skills.length) return text('catalog-empty')
    return [text('catalog-header'), ...skills.map((skill) => `- ${skill.name}: ${skill.description.replace(/\s+/g, ' ')}`)].join('\n')
  }

  /**
   * Watches the skill directories (recursively) and reloads after
   * {@link reloadDelay} ms of quiet. A directory that does not exist yet
   * (e.g. `<workDir>/skills` before the agent writes its first skill) is
   * waited for by watching its nearest existing parent; nothing is
   * created. Returns a function that stops watching.
   */
  watch(): () => void {
    const { localDirs, globalDirs } = this.sources()
    let timer: NodeJS.Timeout | undefined
    let closed = false
    const schedule = () => {
      if (closed) return
      clearTimeout(timer)
      timer = setTimeout(() => {
        this.refresh().catch((error) => logger.warn('reloading skills failed: %s', error?.message ?? error))
      }, reloadDelay)
    }
    const stops = [...new Set([...localDirs, ...globalDirs])].map((dir) => watchDirectory(dir, schedule, () => closed))
    return () => {
      closed = true
      clearTimeout(timer)
      for (const stop of stops) stop()
    }
  }
}

/** The nearest existing ancestor of a missing path. */
function nearestExisting(path: string) {
  let parent = dirname(path)
  while (!existsSync(parent) && dirname(parent) !== parent) parent = dirname(parent)
  return parent
}

/**
 * Calls `onChange` for every change under `dir`. While `dir` is missing,
 * its nearest existing ancestor is watched (not recursively) until it
 * appears; if it is removed, waiting starts again. Returns a stop function.
 */
function watchDirectory(dir: string, onChange: () => void, closed: () => boolean): () => void {
  let watcher: FSWatcher | undefined
  const close = () => {
    watcher?.close()
    watcher = undefined
  }
  const open = () => {
    close()
    if (closed()) return
    if (existsSync(dir)) {
      try {
        watcher = watch(dir, { recursive: true }, () => {
          if (!existsSync(dir)) open()
          onChange()
        })
        watcher.on('error', () => open())
        return
      } catch (error) {
        logger.debug('not watching skill directory %s: %s', dir, error?.message ?? error)
        return
      }
    }
    const parent = nearestExisting(dir)
    try {
      watcher = watch(parent, () => {
        if (existsSync(dir)) {
          open()
          onChange()
        } else if (nearestExisting(dir) !== parent) {
          // A directory on the way appeared (or vanished): watch the new nearest one.
          open()
        }
      })
      watcher.on('error', () => {})
    } catch (error) {
      logger.debug('not watching %s for skill directory %s: %s', parent, dir, error?.message ?? error)
    }
  }
  open()
  return close
}
