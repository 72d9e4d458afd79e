import { expect } from 'chai'
import { readFileSync } from 'fs'
import { resolve } from 'path'
import { load } from 'js-yaml'
import { Dict, interpolate, Schema } from 'koishi'
import { Config } from '../src'

/*
 * `npm start` runs Koishi on a copy of koishi.yml.example; Koishi's loader
 * expands `${{ … }}` with `env` (Loader#interpolate, the same function and
 * pattern as here) before the plugin's Config schema sees the values. The
 * agent must switch on exactly when OPENAI_BASE_URL, OPENAI_API_KEY and
 * OPENAI_MODEL are all set.
 */

function demoConfig(env: Dict<string>) {
  const yaml = load(readFileSync(resolve(__dirname, '../koishi.yml.example'), 'utf8')) as Dict
  const expand = (value: unknown): unknown => {
    if (typeof value === 'string') return interpolate(value, { env }, /\$\{\{(.+?)\}\}/g)
    if (Array.isArray(value)) return value.map(expand)
    if (value && typeof value === 'object') return Object.fromEntries(Object.entries(value).map(([key, inner]) => [key, expand(inner)]))
    return value
  }
  return new (Schema as any)(Config)(expand(yaml.plugins['chatluna-tools:demo'])) as Config
}

describe('koishi.yml.example: the agent in the demo', () => {
  it('stays off without the OPENAI_* variables', () => {
    expect(demoConfig({}).agent.enabled).to.equal(false)
    expect(demoConfig({ OPENAI_BASE_URL: 'https://api.deepseek.com', OPENAI_MODEL: 'deepseek-chat' }).agent.enabled).to.equal(false)
  })

  it('is on against that endpoint when all three are set', () => {
    const { agent } = demoConfig({ OPENAI_BASE_URL: 'https://api.deepseek.com', OPENAI_API_KEY: 'sk-test', OPENAI_MODEL: 'deepseek-chat' })
    expect(agent).to.deep.include({ enabled: true, baseURL: 'https://api.deepseek.com', apiKey: 'sk-test', model: 'deepseek-chat', replyInPrivate: true })
  })
})
