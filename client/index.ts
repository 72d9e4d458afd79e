import { Context } from '@koishijs/client'
import { Ref } from 'vue'
import type { ConsoleEntryData } from '../src/console'
import Page from './page.vue'
import { requiredAuthority } from './state'
import zhCN from './locales/zh-CN.yml'
import enUS from './locales/en-US.yml'
import 'virtual:uno.css'

/**
 * The console page of chatluna-tools. Its texts live in `locales/*.yml`
 * beside this file, merged into the console's i18n under `chatluna-tools`
 * (the console switches between zh-CN and en-US in its settings).
 */
export default (ctx: Context, data: Ref<ConsoleEntryData>) => {
  const { global } = ctx.$i18n.i18n
  global.mergeLocaleMessage('zh-CN', { 'chatluna-tools': zhCN })
  global.mergeLocaleMessage('en-US', { 'chatluna-tools': enUS })

  requiredAuthority.value = data?.value?.authority ?? 4
  ctx.page({
    id: 'chatluna-tools',
    path: '/chatluna-tools',
    name: () => global.t('chatluna-tools.name'),
    icon: 'tools',
    order: 450,
    authority: requiredAuthority.value,
    component: Page,
  })
}
