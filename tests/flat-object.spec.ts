import { expect } from 'chai'
import { Schema } from 'koishi'
import { flatObject } from '../src/schema/flat-object'
import { ArgumentSchema } from '../src/schema/validate'

// The fast path for flat argument objects must give exactly what
// Schemastery gives (same keys, same order, same values), and step aside
// wherever it could not.

const flat = Schema.object({
  text: Schema.string().required(),
  count: Schema.natural().default(1),
  ratio: Schema.number().min(0).max(1),
  flag: Schema.boolean().default(false),
  operation: Schema.union(['file', 'search', 'list']).default('file'),
  note: Schema.string(),
})

const values: any[] = [
  { text: 'hi' },
  { text: 'hi', count: null, flag: null, operation: null, note: null },
  { text: 'hi', count: 3, ratio: 0.5, flag: true, operation: 'list', note: 'n' },
  { note: 'x', text: 'order', extra: [1, 2] },
  { text: '' },
]

describe('schema/flat-object', () => {
  it('gives what Schemastery gives, keys in the same order', () => {
    const resolve = flatObject(flat)
    expect(resolve).to.be.a('function')
    for (const value of values) {
      expect(JSON.stringify(resolve({ ...value })), JSON.stringify(value)).to.equal(JSON.stringify(flat({ ...value })))
    }
  })

  it('leaves a missing or null required property to Schemastery', () => {
    const resolve = flatObject(flat)
    expect(resolve({})).to.equal(undefined)
    expect(resolve({ text: null })).to.equal(undefined)
    const parsed = ArgumentSchema.from({ args: flat }).parse({ text: null })
    expect(parsed.ok).to.equal(false)
    expect(parsed.issues[0].path).to.equal('text')
  })

  it('steps aside for what ajv does not check the same way, and for nested values', () => {
    const refused = {
      pattern: Schema.object({ a: Schema.string().pattern(/^(?=a)/) }),
      'string length': Schema.object({ a: Schema.string().min(2) }),
      'fractional step': Schema.object({ a: Schema.number().step(0.5) }),
      loose: Schema.object({ a: Schema.number().loose() }),
      nested: Schema.object({ a: Schema.object({ b: Schema.string() }) }),
      array: Schema.object({ a: Schema.array(Schema.string()) }),
      'object default': Schema.object({ a: Schema.any().default({}) }),
      'default outside the union': Schema.object({ a: Schema.union(['x', 'y']).default('z' as any) }),
      dict: Schema.dict(Schema.string()),
    }
    for (const [name, schema] of Object.entries(refused)) expect(flatObject(schema), name).to.equal(undefined)
  })

  it('is what ArgumentSchema.parse returns for a flat tool, defaults applied', () => {
    const parsed = ArgumentSchema.from({ args: flat }).parse({ text: 'hi', operation: null })
    expect(parsed).to.deep.equal({ ok: true, value: { text: 'hi', count: 1, flag: false, operation: 'file' } })
    expect(JSON.stringify(parsed.value)).to.equal(JSON.stringify(flat({ text: 'hi', operation: null })))
  })
})
