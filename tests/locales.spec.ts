import { expect } from 'chai'
import { Dict, Schema } from 'koishi'
import { Config } from '../src'
import { localeIds, locales } from '../src/locales'

function flatten(value: unknown, prefix = '', out: string[] = []) {
  if (value && typeof value === 'object' && !Array.isArray(value)) {
    for (const [key, inner] of Object.entries(value)) flatten(inner, prefix ? `${prefix}.${key}` : key, out)
  } else {
    out.push(prefix)
  }
  return out
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
    const [first, ...rest] = localeIds.map((id) => flatten(locales[id]).sort())
    for (const keys of rest) expect(keys).to.deep.equal(first)
  })

  it('every config field has a description in every locale', () => {
    expect(undescribed(Config, '', [])).to.deep.equal([])
  })
})
