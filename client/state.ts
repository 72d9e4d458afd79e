import { computed, onScopeDispose, reactive, ref, watch } from 'vue'
import { message, send, store, useI18n } from '@koishijs/client'
import type {
  ApprovalView, CallView, ConsoleScopeInput, ScopeReport, ToolDetail, ToolTable,
} from '../src/console'

/** The scope bar's fields, as the page edits them. */
export interface ScopeForm {
  platform: string
  kind: 'group' | 'private'
  guildId: string
  channelId: string
  userId: string
  authority: number
  agent: string
  include: string
  exclude: string
  mode: string
}

export const scopeForm = reactive<ScopeForm>({
  platform: '',
  kind: 'group',
  guildId: '',
  channelId: '',
  userId: '',
  authority: 1,
  agent: '',
  include: '',
  exclude: '',
  /** Empty until the table arrives, then the config's mode. */
  mode: '',
})

export const selected = ref<string>()
export const report = ref<ScopeReport>()
export const detail = ref<ToolDetail>()

export const table = computed(() => store['chatluna-tools'] as ToolTable | undefined)
export const calls = computed(() => (store['chatluna-tools-calls'] ?? []) as CallView[])
export const approvals = computed(() => (store['chatluna-tools-approvals'] ?? []) as ApprovalView[])

function patterns(text: string) {
  return text.split(/[,，\s]+/).map((item) => item.trim()).filter(Boolean)
}

/** The scope the server is asked about, in the page's locale. */
export function scopeInput(locale: string): ConsoleScopeInput {
  return {
    platform: scopeForm.platform || undefined,
    kind: scopeForm.kind,
    guildId: scopeForm.kind === 'group' ? scopeForm.guildId || undefined : undefined,
    channelId: scopeForm.channelId || undefined,
    userId: scopeForm.userId || undefined,
    authority: scopeForm.authority,
    agent: scopeForm.agent || undefined,
    include: patterns(scopeForm.include),
    exclude: patterns(scopeForm.exclude),
    mode: scopeForm.mode || undefined,
    locale,
  }
}

/** `t('x')` for `chatluna-tools.x` in the console's current locale. */
export function useText() {
  const { t, locale } = useI18n()
  const text = (key: string, params: Record<string, unknown> = {}) => t(`chatluna-tools.${key}`, params)
  return { t: text, locale }
}

/** The authority the page needs (from the entry data). */
export const requiredAuthority = ref(4)

/** The policies a tool-name pattern can be given (the server's `toolPolicies`). */
export const toolPolicies = ['auto', 'approval', 'disabled']

/** Shows a failed page action in the console's message area, in words the admin understands. */
export function reportError(t: (key: string, params?: any) => string, error: unknown) {
  // The console sends a listener's error as its stack: keep the message line.
  const text = String((error as any)?.message ?? error).split('\n')[0].replace(/^\w*Error: /, '')
  if (text === 'unauthorized' || text.startsWith('console-authority')) {
    message.error(t('errors.unauthorized', { authority: requiredAuthority.value }))
  } else {
    message.error(t('errors.failed', { message: text.replace(/^invalid-input: /, '') }))
  }
}

/**
 * Keeps `report` and `detail` in step with the scope bar, the selected tool,
 * the tool table and the locale. Call once from the page's setup; it
 * stops when the page is unmounted.
 */
export function useLiveReport() {
  const { t, locale } = useText()
  let timer: ReturnType<typeof setTimeout>
  let sequence = 0

  async function refresh() {
    // No table yet (loading), or null (this console user may not see it).
    if (!table.value) return
    const current = ++sequence
    const input = scopeInput(locale.value)
    try {
      const [nextReport, nextDetail] = await Promise.all([
        send('chatluna-tools/scope', input),
        selected.value ? send('chatluna-tools/tool', selected.value, input) : undefined,
      ])
      if (current !== sequence) return
      report.value = nextReport
      detail.value = nextDetail ?? undefined
    } catch (error) {
      if (current === sequence) reportError(t, error)
    }
  }

  watch(table, (value) => {
    if (value && !scopeForm.mode) scopeForm.mode = value.features.defaultMode
  }, { immediate: true })

  watch([() => ({ ...scopeForm }), selected, table, locale], () => {
    clearTimeout(timer)
    timer = setTimeout(refresh, 120)
  }, { immediate: true, deep: true })
  // The watchers stop with the page; a refresh still pending stops with them.
  onScopeDispose(() => clearTimeout(timer))

  return { refresh }
}
