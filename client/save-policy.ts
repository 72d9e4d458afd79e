import { message, send } from '@koishijs/client'
import { reportError } from './state'

type Text = (key: string, params?: Record<string, unknown>) => string

/**
 * Sets the policy of a tool-name pattern (null removes the one set at run
 * time) and says how it went: "Saved." only when the server saved it;
 * otherwise the server's reason (in `locale`, the page's language), the
 * listener's error, or that the console is not connected. Returns whether
 * it was saved.
 */
export async function savePolicy(t: Text, locale: string, pattern: string, policy: string | null): Promise<boolean> {
  try {
    // `send` gives undefined when the console has no connection.
    const result = await send('chatluna-tools/set-policy', pattern, policy, locale)
    if (!result) {
      message.error(t('errors.offline'))
      return false
    }
    if (!result.ok) {
      message.error(t('errors.failed', { message: result.message || result.code }))
      return false
    }
    message.success(t('saved'))
    return true
  } catch (error) {
    reportError(t, error)
    return false
  }
}
