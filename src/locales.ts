import { readFileSync } from 'fs'
import { resolve } from 'path'
import { load } from 'js-yaml'
import { Dict, Schema } from 'koishi'

/** Locale ids shipped in `locales/`, default first. */
export const localeIds = ['zh-CN', 'en-US'] as const

function read(locale: string): Dict {
  // `locales/` sits beside `src/` and `lib/`, so the same path works from both.
  return load(readFileSync(resolve(__dirname, '../locales', `${locale}.yml`), 'utf8')) as Dict
}

/** Parsed locale files: `{ 'zh-CN': {...}, 'en-US': {...} }`. */
export const locales: Dict<Dict> = Object.fromEntries(localeIds.map((id) => [id, read(id)]))

/**
 * A config section with its texts from `_config.<key>` of every locale
 * file (`$desc` for the section heading, one entry per field).
 */
export function configSection<S extends Schema>(key: string, schema: S): S {
  return schema.i18n(Object.fromEntries(localeIds.map((id) => [id, locales[id]._config?.[key] ?? {}]))) as S
}
