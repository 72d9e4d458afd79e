import { expect } from 'chai'
import { Dict, Schema } from 'koishi'
import { Config } from '../src'
import { localeIds, locales } from '../src/locales'
import { localeKeys } from './helpers/locales'
import { readdirSync, readFileSync } from 'fs'
import { join, resolve } from 'path'

/** The text of every TypeScript file under `src/`. */
function sources(dir = resolve(__dirname, '../src')): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => entry.isDirectory()
    ? sources(join(dir, entry.name))
    : entry.name.endsWith('.ts') ? [readFileSync(join(dir, entry.name), 'utf8')] : [])
}

/** Paths of config fields whose description lacks a locale. */
function undescribed(schema: Schema, path: string, missing: string[]) {
  if (schema.type === 'intersect' || schema.type === 'union') {
    for (const inner of schema.list ?? []) {
      if (inner.type === 'object' || inner.type === 'intersect') undescribed(inner, path, missing)
    }
  } else if (schema.type === 'object') {
    for (const [key, inner] of Object.entries(schema.dict as Dict<Schema>)) {
      const description = inner.meta.description as Dict<string> | string | undefined
      for (const locale of localeIds) {
        if (typeof description !== 'object' || !description?.[locale]) missing.push(`${path}${key} (${locale})`)
      }
      undescribed(inner, `${path}${key}.`, missing)
    }
  } else if (schema.type === 'array' && schema.inner) {
    undescribed(schema.inner, `${path}[].`, missing)
  }
  return missing
}

describe('locales', () => {
  it('zh-CN and en-US define the same keys', () => {
    const [first, ...rest] = localeIds.map((id) => localeKeys(locales[id]).sort())
    for (const keys of rest) expect(keys).to.deep.equal(first)
  })

  it('defines every chat text the sources name literally, and every tool error text', () => {
    const keys = new Set(localeKeys(locales['en-US']))
    const text = sources().join('\n')
    const used = new Set<string>()
    for (const [, key] of text.matchAll(/'(chatluna-tools\.[a-z0-9-]+(?:\.[a-z0-9-]+)+)'/g)) used.add(key)
    for (const [, code] of text.matchAll(/toolErrorText\('([a-z0-9-]+)'/g)) used.add(`chatluna-tools.tool-error.${code}`)
    const pathCodes = ['empty-path', 'nul-byte', 'too-long', 'outside-workdir', 'read-only', 'unresolvable']
    for (const code of pathCodes) used.add(`chatluna-tools.path.${code}`)
    for (const code of ['unknown-tool', 'unknown-tool-none', 'no-tool-name', 'no-tool-name-none', 'not-available', 'forward-not-available',
      'timeout', 'aborted', 'hook-timeout', 'hook-error', 'blocked-by-hook']) used.add(`chatluna-tools.error.${code}`)
    expect(used.size).to.be.greaterThan(30)
    expect([...used].filter((key) => !keys.has(key))).to.deep.equal([])
  })

  it('every config field has a description in every locale', () => {
    expect(undescribed(Config, '', [])).to.deep.equal([])
  })
})
