import { promises as fs } from 'fs'
import { join } from 'path'
import matter from 'gray-matter'
import { load } from 'js-yaml'
import { Dict } from 'koishi'
import { fnv1a } from './fnv'

/** Where a skill comes from: local dirs win over global ones (RuleGo seed, "技能分为两级"). */
export type SkillScope = 'local' | 'global'

/** A loaded `SKILL.md` (RuleGo seed, "技能文件格式为 SKILL.md（Markdown + YAML frontmatter）"). */
export interface Skill {
  /** `name` of the frontmatter, else the folder name. */
  name: string
  description: string
  /** The Markdown after the frontmatter. */
  body: string
  /** Absolute folder of the skill (holding `SKILL.md`): relative paths in the body start there. */
  dir: string
  /** Absolute path of `SKILL.md`. */
  file: string
  scope: SkillScope
  /** The configured skills directory it was found in. */
  root: string
  /** Every frontmatter field, extra ones included. */
  data: Dict
}

/** A `SKILL.md` that was skipped, and why. */
export interface SkillWarning {
  file: string
  reason: string
}

/** What one skills directory holds. */
export interface SkillDirectory {
  dir: string
  /** FNV-1a over the path, size and mtime of every `SKILL.md`; equal → nothing to re-parse. */
  fingerprint: number
  skills: Skill[]
  warnings: SkillWarning[]
}

/** Largest `SKILL.md` read, in bytes. */
export const maxSkillSize = 1024 * 1024

/** Skill names: letters (any script), digits, `_`, `.`, `-`; 1 to 64 characters. */
const skillName = /^[\p{L}\p{N}][\p{L}\p{N}_.-]{0,63}$/u

const refuse = {
  parse() {
    throw new Error('only YAML or JSON frontmatter is accepted')
  },
}

/**
 * gray-matter options: passing options also keeps gray-matter from
 * caching results by content in a module-wide object that grows forever
 * and hands out shared objects. YAML is read with js-yaml 4 (no custom
 * types); JavaScript and CoffeeScript frontmatter (`---js`), which
 * gray-matter would `eval` in the bot's process, are refused.
 */
const matterOptions = {
  language: 'yaml',
  engines: {
    yaml: { parse: (text: string) => load(text) as object },
    javascript: refuse,
    coffee: refuse,
  },
}

/** Parses one `SKILL.md`; throws an `Error` saying what is wrong. */
export function parseSkill(text: string, info: { file: string; dir: string; folder: string; scope: SkillScope; root: string }): Skill {
  const parsed = matter(text, matterOptions as any)
  const data = parsed.data
  if (!data || typeof data !== 'object' || Array.isArray(data)) throw new Error('the frontmatter is not a mapping')
  const name = data.name === undefined ? info.folder : data.name
  if (typeof name !== 'string' || !skillName.test(name)) {
    throw new Error(`the name ${JSON.stringify(name)} is not valid (letters, digits, "_", ".", "-"; at most 64 characters)`)
  }
  if (typeof data.description !== 'string' || !data.description.trim()) {
    throw new Error('the frontmatter has no description')
  }
  return {
    name,
    description: data.description.trim(),
    body: parsed.content.replace(/^\s*\n/, ''),
    dir: info.dir,
    file: info.file,
    scope: info.scope,
    root: info.root,
    data: { ...data },
  }
}

interface SkillFile {
  folder: string
  file: string
  size: number
  mtime: number
}

/** The `<dir>/<skill>/SKILL.md` files of a directory, sorted by folder name, and their fingerprint. */
export async function listSkillFiles(dir: string): Promise<{ files: SkillFile[]; fingerprint: number }> {
  let names: string[]
  try {
    names = (await fs.readdir(dir, { withFileTypes: true }))
      .filter((entry) => entry.isDirectory() || entry.isSymbolicLink())
      .map((entry) => entry.name)
      .sort()
  } catch {
    return { files: [], fingerprint: 0 }
  }
  const files: SkillFile[] = []
  let fingerprint = fnv1a(dir)
  for (const folder of names) {
    const file = join(dir, folder, 'SKILL.md')
    const stat = await fs.stat(file).catch(() => undefined)
    if (!stat?.isFile()) continue
    files.push({ folder, file, size: stat.size, mtime: stat.mtimeMs })
    fingerprint = fnv1a(`\0${file}\0${stat.size}\0${stat.mtimeMs}`, fingerprint)
  }
  return { files, fingerprint }
}

/**
 * Loads the skills of one directory. A skill that cannot be read or
 * parsed is skipped with a warning; the others still load. With
 * `previous` of the same fingerprint, nothing is re-read.
 */
export async function loadSkillDirectory(dir: string, scope: SkillScope, previous?: SkillDirectory): Promise<SkillDirectory> {
  const { files, fingerprint } = await listSkillFiles(dir)
  if (previous && previous.fingerprint === fingerprint) return previous
  const result: SkillDirectory = { dir, fingerprint, skills: [], warnings: [] }
  for (const entry of files) {
    if (entry.size > maxSkillSize) {
      result.warnings.push({ file: entry.file, reason: `it is larger than ${maxSkillSize} bytes` })
      continue
    }
    try {
      const text = await fs.readFile(entry.file, 'utf8')
      result.skills.push(parseSkill(text, { file: entry.file, dir: join(dir, entry.folder), folder: entry.folder, scope, root: dir }))
    } catch (error) {
      result.warnings.push({ file: entry.file, reason: String(error?.message ?? error).split('\n')[0].trim() })
    }
  }
  return result
}
