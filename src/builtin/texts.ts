import { Dict, Schema } from 'koishi'
import { localeIds, locales } from '../locales'
import { pickDescription } from '../schema/schemastery'
import { ToolCaller } from '../types'

/** The locale texts of a built-in tool: `chatluna-tools.builtin.<tool>` of one locale file. */
function texts(locale: string, tool: string): Dict | undefined {
  return locales[locale]?.['chatluna-tools']?.builtin?.[tool]
}

/**
 * The description of a built-in tool in the best of `preferred` locales
 * (each locale, then its language, then `en-US`), from
 * `chatluna-tools.builtin.<tool>.description` of the locale files.
 */
export function toolDescription(tool: string, preferred: string[] = []): string {
  const byLocale = Object.fromEntries(localeIds.map((id) => [id, texts(id, tool)?.description]))
  return pickDescription(byLocale, [...preferred, 'en-US']) ?? tool
}

/**
 * A `describe(caller)` for a built-in tool: its description in the caller's
 * locale (DESIGN.md "ToolDefinition": dynamic description). `force` picks a
 * locale whatever the caller's (the skills' `useChinese`).
 */
export function describeIn(tool: string, force?: () => string | undefined) {
  return (caller: ToolCaller) => {
    const forced = force?.()
    return toolDescription(tool, forced ? [forced] : [caller.locale ?? caller.scope?.locale].filter(Boolean))
  }
}

/**
 * Gives an argument schema its per-locale descriptions from
 * `chatluna-tools.builtin.<tool>.args` of every locale file, so the model
 * reads them in the caller's language.
 */
export function localizedArgs<S extends Schema>(tool: string, schema: S): S {
  return schema.i18n(Object.fromEntries(localeIds.map((id) => [id, texts(id, tool)?.args ?? {}]))) as S
}
