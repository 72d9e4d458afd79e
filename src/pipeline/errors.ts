import { Dict } from 'koishi'
import { ArgumentIssue, ToolReasonText, ToolStatus } from '../types'

/**
 * An error a tool throws on purpose to return a structured failure: the
 * pipeline keeps `code`, `message`, `hint` and `text` (the locale text
 * chat users see, {@link ToolReasonText}), and uses `status` (default
 * `error`; e.g. `denied` for a refused path).
 */
export class ToolRunError extends Error {
  name = 'ToolRunError'

  constructor(
    public code: string,
    message: string,
    public options: { status?: ToolStatus; hint?: string; issues?: ArgumentIssue[]; text?: ToolReasonText } = {},
  ) {
    super(message)
  }
}

/**
 * The chat text of a tool's own error: `chatluna-tools.tool-error.<code>`
 * with `params` (a `path` or `name` is shown on one line). Both locale files
 * must define the key; `tests/locales.spec.ts` checks the ones in use.
 */
export function toolErrorText(code: string, params: Dict = {}): ToolReasonText {
  return { path: `chatluna-tools.tool-error.${code}`, params }
}
