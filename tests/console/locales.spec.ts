import { expect } from 'chai'
import { readFileSync } from 'fs'
import { join } from 'path'
import { load } from 'js-yaml'
import { approvalAnswers } from '../../src/permission/answers'
import { localeKeys } from '../helpers/locales'

// The console page's own texts (client/locales) must exist in both languages.

const read = (locale: string) => load(readFileSync(join(__dirname, '../../client/locales', `${locale}.yml`), 'utf8'))

describe('console: page locales', () => {
  it('zh-CN and en-US define the same keys', () => {
    expect(localeKeys(read('en-US')).sort()).to.deep.equal(localeKeys(read('zh-CN')).sort())
  })

  it('no text uses vue-i18n special characters unescaped (@ starts a linked message, | separates plurals)', () => {
    for (const locale of ['zh-CN', 'en-US']) {
      const texts: string[] = []
      const walk = (value: unknown) => {
        if (typeof value === 'string') texts.push(value)
        else if (value && typeof value === 'object') Object.values(value).forEach(walk)
      }
      walk(read(locale))
      for (const text of texts) {
        expect(text.replace(/\{'[@|]'\}/g, ''), `${locale}: ${text}`).not.to.match(/[@|]/)
      }
    }
  })

  it('labels and explains every approval answer the permission service accepts', () => {
    for (const locale of ['zh-CN', 'en-US']) {
      const approvals = (read(locale) as any).approvals
      expect(Object.keys(approvals.answers), locale).to.deep.equal([...approvalAnswers])
      expect(Object.keys(approvals.hints), locale).to.deep.equal([...approvalAnswers])
    }
  })
})
