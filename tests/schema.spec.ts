import { Ajv } from 'ajv'
import { expect } from 'chai'
import { Schema } from 'koishi'
import { describeValue } from '../src/schema/issues'
import { pickDescription, toJSONSchema } from '../src/schema/json-schema'
import { ArgumentSchema, ParseResult } from '../src/schema/validate'
import { ArgumentIssue } from '../src/types'

// Formats are declared so that strict mode knows them (no ajv-formats here).
const formats = { 'date-time': true, date: true, time: true, regex: true } as const
const strictAjv = new Ajv({ strict: true, formats })
const looseAjv = new Ajv({ strict: false, formats })

/** `[name, schema, expected JSON Schema, loose]`; loose: strict mode cannot take it (a tuple with optional members). */
type Shape = [string, Schema, any, boolean?]

const obj = (properties: any, required?: string[]) => ({ type: 'object', properties, ...required ? { required } : {} })

const lazy: Schema = Schema.lazy(() => Schema.object({
  name: Schema.string().required(),
  children: Schema.array(lazy),
}))

const shapes: Shape[] = [
  ['empty object', Schema.object({}), obj({})],
  ['required string with description', Schema.object({ path: Schema.string().description('File path.').required() }),
    obj({ path: { type: 'string', description: 'File path.' } }, ['path'])],
  ['number with min, max and default (not required)', Schema.object({ n: Schema.number().min(1).max(9).default(3) }),
    obj({ n: { type: 'number', minimum: 1, maximum: 9, default: 3 } })],
  ['natural', Schema.natural(), { type: 'integer', minimum: 0 }],
  ['integer via step(1)', Schema.number().step(1).min(1), { type: 'integer', minimum: 1 }],
  ['integer step 5', Schema.number().step(5), { type: 'integer', multipleOf: 5 }],
  ['fractional step is left to Schemastery', Schema.number().step(0.5), { type: 'number' }],
  ['percent', Schema.percent(), { type: 'number', minimum: 0, maximum: 1 }],
  ['boolean with default', Schema.boolean().default(true), { type: 'boolean', default: true }],
  ['const', Schema.const('on'), { type: 'string', const: 'on' }],
  ['union of string consts → enum', Schema.union(['read', 'write']).default('read'),
    { type: 'string', enum: ['read', 'write'], default: 'read' }],
  ['union of mixed consts → untyped enum', Schema.union([1, 'a']), { enum: [1, 'a'] }],
  ['union of types → anyOf', Schema.union([Schema.string(), Schema.number()]),
    { anyOf: [{ type: 'string' }, { type: 'number' }] }],
  ['union of consts and a type', Schema.union([Schema.const('auto'), Schema.const('none'), Schema.natural()]),
    { anyOf: [{ type: 'string', enum: ['auto', 'none'] }, { type: 'integer', minimum: 0 }] }],
  ['labelled consts keep their labels in the description',
    Schema.union([Schema.const('a').description('Alpha'), Schema.const('b').description('Beta')]).description('Mode.'),
    { type: 'string', enum: ['a', 'b'], description: 'Mode. ("a": Alpha; "b": Beta)' }],
  ['array with min/max items', Schema.array(String).min(1).max(5),
    { type: 'array', items: { type: 'string' }, minItems: 1, maxItems: 5 }],
  ['array whose items have a default: Schemastery skips min',
    Schema.array(Schema.string().default('x')).min(2).default(['a', 'b']),
    { type: 'array', items: { type: 'string', default: 'x' }, default: ['a', 'b'] }],
  ['array of objects', Schema.array(Schema.object({ name: Schema.string().required(), size: Schema.natural() })),
    { type: 'array', items: obj({ name: { type: 'string' }, size: { type: 'integer', minimum: 0 } }, ['name']) }],
  ['dict', Schema.dict(Number), { type: 'object', additionalProperties: { type: 'number' } }],
  ['dict with a key pattern', Schema.dict(Boolean, Schema.string().pattern(/^[a-z]+$/)),
    { type: 'object', additionalProperties: { type: 'boolean' }, propertyNames: { type: 'string', pattern: '^[a-z]+$' } }],
  ['intersect → one merged object', Schema.intersect([
    Schema.object({ a: Schema.string().required() }),
    Schema.object({ b: Schema.number().default(1), c: Schema.boolean().required() }),
  ]),
    obj({ a: { type: 'string' }, b: { type: 'number', default: 1 }, c: { type: 'boolean' } }, ['a', 'c'])],
  ['tuple of required members', Schema.tuple([String, Number]),
    { type: 'array', items: [{ type: 'string' }, { type: 'number' }], minItems: 2, maxItems: 2 }],
  ['tuple with an optional tail', Schema.tuple([Schema.string().required(), Schema.number()]),
    { type: 'array', items: [{ type: 'string' }, { type: 'number' }], minItems: 1, maxItems: 2 }, true],
  ['any', Schema.any(), {}],
  ['never', Schema.never(), { not: {} }],
  ['transform → inner schema', Schema.transform(Schema.string().max(10), (value) => value.trim()).description('Trimmed.'),
    { type: 'string', maxLength: 10, description: 'Trimmed.' }],
  ['bitset → array of enum strings', Schema.bitset({ read: 1, write: 2, exec: 4 }).default(3), {
    type: 'array', items: { type: 'string', enum: ['read', 'write', 'exec'] }, uniqueItems: true, default: ['read', 'write'],
  }],
  ['date', Schema.date(), { type: 'string', format: 'date-time' }],
  ['regExp', Schema.regExp(), { type: 'string', format: 'regex' }],
  ['string length and pattern', Schema.string().min(2).max(8).pattern(/^\w+$/),
    { type: 'string', minLength: 2, maxLength: 8, pattern: '^\\w+$' }],
  ['pattern with the i flag is not declared', Schema.string().pattern(/^abc$/i), { type: 'string' }],
  ['hidden fields are omitted', Schema.object({ shown: Schema.string(), secret: Schema.string().hidden().required() }),
    obj({ shown: { type: 'string' } })],
  ['nested object with a required field is itself required',
    Schema.object({ opts: Schema.object({ id: Schema.string().required() }), free: Schema.object({ x: Number }) }),
    obj({ opts: obj({ id: { type: 'string' } }, ['id']), free: obj({ x: { type: 'number' } }, ['x']) }, ['opts', 'free'])],
  ['nested object whose default satisfies it is optional',
    Schema.object({ opts: Schema.object({ id: Schema.string().required() }).default({ id: 'x' }) }),
    obj({ opts: { ...obj({ id: { type: 'string' } }, ['id']), default: { id: 'x' } } })],
  ['union member that JSON cannot hold is dropped', Schema.union([Schema.is(Date), Schema.function(), Schema.string()]),
    { type: 'string' }],
  ['lazy recursive schema stops at the recursion', lazy,
    obj({ name: { type: 'string' }, children: { type: 'array', items: {} } }, ['name'])],
  ['string default and object description',
    Schema.object({ mode: Schema.string().default('fast') }).description('Options.'),
    { ...obj({ mode: { type: 'string', default: 'fast' } }), description: 'Options.' }],
]

function hasUndefined(value: any): boolean {
  if (value === undefined) return true
  if (!value || typeof value !== 'object') return false
  return Object.values(value).some(hasUndefined)
}

describe('schema/json-schema', () => {
  it(`covers at least 20 shapes (${shapes.length})`, () => {
    expect(shapes.length).to.be.at.least(20)
  })

  for (const [name, schema, expected, loose] of shapes) {
    it(name, () => {
      const result = toJSONSchema(schema)
      expect(result).to.deep.equal(expected)
      expect(hasUndefined(result)).to.equal(false)
      expect(looseAjv.validateSchema(result), JSON.stringify(looseAjv.errors)).to.equal(true)
      const ajv = loose ? looseAjv : strictAjv
      expect(() => ajv.compile(result)).not.to.throw()
      // The validator's variant (no descriptions, nullable optionals) must compile too.
      const variant = toJSONSchema(schema, { descriptions: false, nullable: true })
      expect(looseAjv.validateSchema(variant)).to.equal(true)
      expect(() => looseAjv.compile(variant)).not.to.throw()
    })
  }

  describe('descriptions', () => {
    const schema = Schema.object({
      path: Schema.string().description('Path (plain).').required(),
      only: Schema.string(),
    }).i18n({
      'zh-CN': { path: '文件路径。', only: '只有中文。', $description: '读取文件。' },
      'en-US': { path: 'File path.' },
    })

    it('stores .i18n() texts as a dict keyed by locale, keeping .description() under ""', () => {
      expect(schema.dict!.path.meta.description).to.deep.equal({ '': 'Path (plain).', 'zh-CN': '文件路径。', 'en-US': 'File path.' })
    })

    it('picks the requested locale', () => {
      expect(toJSONSchema(schema, { locale: 'zh-CN' }).properties.path.description).to.equal('文件路径。')
      expect(toJSONSchema(schema, { locale: 'en-US' }).properties.path.description).to.equal('File path.')
      expect(toJSONSchema(schema, { locale: 'zh-CN' }).description).to.equal('读取文件。')
    })

    it('falls back along the list, then to "", then to the first text', () => {
      expect(toJSONSchema(schema, { locale: 'fr-FR', fallback: ['en-US'] }).properties.path.description).to.equal('File path.')
      expect(toJSONSchema(schema, { locale: ['ja-JP', 'zh-CN'] }).properties.path.description).to.equal('文件路径。')
      expect(toJSONSchema(schema, { locale: 'fr-FR' }).properties.path.description).to.equal('Path (plain).')
      expect(toJSONSchema(schema, { locale: 'en-US' }).properties.only.description).to.equal('只有中文。')
      expect(toJSONSchema(schema).properties.path.description).to.equal('Path (plain).')
    })

    it('matches a region variant by language', () => {
      expect(toJSONSchema(schema, { locale: 'zh-TW', fallback: ['en-US'] }).properties.path.description).to.equal('文件路径。')
      expect(pickDescription({ zh: '中', en: 'E' }, ['zh-CN'])).to.equal('中')
    })

    it('handles plain strings and empty dicts', () => {
      expect(pickDescription('x', ['zh-CN'])).to.equal('x')
      expect(pickDescription({}, ['zh-CN'])).to.equal(undefined)
      expect(pickDescription(undefined, [])).to.equal(undefined)
    })

    it('caches declarations per locale and freezes them', () => {
      const args = ArgumentSchema.from({ args: schema })
      const zh = args.jsonSchema('zh-CN')
      expect(args.jsonSchema('zh-CN')).to.equal(zh)
      expect(args.jsonSchema('en-US')).not.to.equal(zh)
      expect(Object.isFrozen(zh.properties.path)).to.equal(true)
    })
  })
})

function issuesOf(result: ParseResult): ArgumentIssue[] {
  if (result.ok === false) return result.issues
  throw new Error(`expected issues, got ${JSON.stringify(result.value)}`)
}

/** `[path, expected, got]` of each issue. */
function brief(result: ParseResult) {
  return issuesOf(result).map((issue) => [issue.path, issue.expected, issue.got])
}

describe('schema/validate', () => {
  const args = Schema.object({
    path: Schema.string().required(),
    limit: Schema.natural().max(100).default(10),
    mode: Schema.union(['read', 'write']).default('read'),
    items: Schema.array(Schema.object({ name: Schema.string().required(), size: Schema.number() })),
    value: Schema.union([Schema.string(), Schema.object({ n: Schema.number().required() })]),
  })
  const tool = ArgumentSchema.from({ args })

  it('applies defaults to correct arguments', () => {
    expect(tool.parse({ path: 'a.txt' })).to.deep.equal({ ok: true, value: { path: 'a.txt', limit: 10, mode: 'read', items: [] } })
    expect(tool.compileError).to.equal(undefined)
  })

  it('reports a wrong type with path, expected and got', () => {
    const result = tool.parse({ path: 3 })
    expect(result).to.deep.equal({
      ok: false,
      issues: [{ path: 'path', expected: 'string', got: 'number 3', message: '"path" should be string, but got number 3' }],
    })
  })

  it('reports a missing required property', () => {
    const result = tool.parse({})
    expect(issuesOf(result)).to.deep.equal([
      {
        path: 'path',
        expected: 'required property "path"',
        got: 'missing',
        message: 'Missing required property "path"',
        text: { path: 'chatluna-tools.error.issue-missing', params: { name: 'path' } },
      },
    ])
  })

  it('reports errors inside array items with a dotted path', () => {
    const result = tool.parse({ path: 'a', items: [{ name: 'x' }, { name: 1 }, { size: 2 }] })
    expect(brief(result)).to.deep.equal([
      ['items.1.name', 'string', 'number 1'],
      ['items.2.name', 'required property "name"', 'missing'],
    ])
    expect(issuesOf(result)[1].message).to.equal('Missing required property "name" in "items.2"')
  })

  it('reports an enum mismatch', () => {
    const result = tool.parse({ path: 'a', mode: 'exec' })
    expect(issuesOf(result)).to.deep.equal([{
      path: 'mode',
      expected: 'one of "read", "write"',
      got: 'string "exec"',
      message: '"mode" should be one of "read", "write", but got string "exec"',
    }])
  })

  it('reports range errors', () => {
    const result = tool.parse({ path: 'a', limit: 1.5 })
    expect(issuesOf(result).map((issue) => issue.expected)).to.deep.equal(['integer'])
    const high = tool.parse({ path: 'a', limit: 101 })
    expect(issuesOf(high)[0].expected).to.equal('number <= 100')
  })

  it('folds anyOf noise: a deep failure in the matching branch, else one summary', () => {
    const deep = tool.parse({ path: 'a', value: { n: 'x' } })
    expect(issuesOf(deep).map((issue) => [issue.path, issue.expected])).to.deep.equal([['value.n', 'number']])
    const flat = tool.parse({ path: 'a', value: 5 })
    expect(issuesOf(flat)).to.deep.equal([{
      path: 'value',
      expected: 'string or object',
      got: 'number 5',
      message: '"value" should be string or object, but got number 5',
    }])
  })

  it('follows the discriminator of a union of objects', () => {
    const action = ArgumentSchema.from({
      args: Schema.object({
        action: Schema.union([
          Schema.object({ kind: Schema.const('move').required(), to: Schema.string().required() }),
          Schema.object({ kind: Schema.const('delete').required(), force: Schema.boolean() }),
        ]).required(),
      }),
    })
    const result = action.parse({ action: { kind: 'move' } })
    expect(issuesOf(result).map((issue) => [issue.path, issue.expected])).to.deep.equal([['action.to', 'required property "to"']])
    const other = action.parse({ action: { kind: 'delete', force: 'yes' } })
    expect(issuesOf(other).map((issue) => [issue.path, issue.expected])).to.deep.equal([['action.force', 'boolean']])
  })

  it('reports dict key and value errors', () => {
    const flags = ArgumentSchema.from({ args: Schema.object({ flags: Schema.dict(Boolean, Schema.string().pattern(/^[a-z]+$/)) }) })
    const result = flags.parse({ flags: { ok: true, Bad: true, x: 1 } })
    expect(brief(result)).to.deep.equal([
      ['flags', 'valid property names', 'property name "Bad"'],
      ['flags.x', 'boolean', 'number 1'],
    ])
  })

  it('reports a property the object does not have, naming the known ones, instead of ignoring it', () => {
    expect(tool.properties).to.include('path')
    const result = tool.parse({ path: 'a', offset: 5, limit: 3 })
    expect(result.ok).to.equal(false)
    expect(result.issues.map((issue) => [issue.path, issue.got])).to.deep.equal([['offset', 'an unknown property']])
    expect(result.issues[0].message).to.equal(`"offset" is not a property of this tool (it takes: ${tool.properties.join(', ')})`)
  })

  it('takes the keys of every member of an intersect: a union of objects (Koishi\'s conditional fields) or a dict', () => {
    const conditional = Schema.intersect([
      Schema.object({ mode: Schema.union(['copy', 'move']).required() }),
      Schema.union([
        Schema.object({ mode: Schema.const('copy').required(), to: Schema.string().required() }),
        Schema.object({ mode: Schema.const('move').required(), force: Schema.boolean().default(false) }),
      ]),
    ])
    const parsed = ArgumentSchema.from({ args: conditional }).parse({ mode: 'copy', to: 'b.txt' })
    expect(parsed).to.deep.equal({ ok: true, value: conditional({ mode: 'copy', to: 'b.txt' }) })
    const open = Schema.intersect([Schema.object({ a: Schema.string() }), Schema.dict(Schema.string())])
    expect(ArgumentSchema.from({ args: open }).parse({ a: 'x', b: 'y' })).to.deep.equal({ ok: true, value: { a: 'x', b: 'y' } })
  })

  it('takes a hidden property (not shown to the model) and checks it as Schemastery does, naming only the shown ones', () => {
    const hidden = ArgumentSchema.from({ args: Schema.object({ text: Schema.string(), internal: Schema.string().hidden() }) })
    expect(hidden.parse({ text: 'a', internal: 'b' })).to.deep.equal({ ok: true, value: { text: 'a', internal: 'b' } })
    const wrong = hidden.parse({ internal: 5 })
    expect(wrong.ok).to.equal(false)
    expect(wrong.issues.map((issue) => issue.path)).to.deep.equal(['internal'])
    const unknown = hidden.parse({ other: 1 })
    expect(unknown.issues[0].message).to.equal('"other" is not a property of this tool (it takes: text)')
  })

  it('lets any key through a dict or a raw JSON Schema without additionalProperties', () => {
    expect(ArgumentSchema.from({ args: Schema.dict(Schema.number()) }).parse({ anything: 1 }).ok).to.equal(true)
    expect(ArgumentSchema.from({ parameters: { type: 'object', properties: { a: { type: 'string' } } } }).parse({ b: 1 }).ok).to.equal(true)
  })

  it('accepts null for optional fields, as Schemastery does (null counts as missing)', () => {
    const result = tool.parse({ path: 'a', limit: null, mode: null })
    expect(result.ok).to.equal(true)
    expect(result.ok && result.value.limit).to.equal(10)
    const bad = tool.parse({ path: null })
    expect(bad.ok).to.equal(false)
  })

  it('treats undefined and null as {} and rejects other non-objects at the root', () => {
    const empty = ArgumentSchema.from({ args: Schema.object({ n: Schema.number().default(1) }) })
    expect(empty.parse(undefined)).to.deep.equal({ ok: true, value: { n: 1 } })
    expect(empty.parse(null)).to.deep.equal({ ok: true, value: { n: 1 } })
    for (const [value, got] of [['abc', 'string "abc"'], [[1], 'array of 1 item'], [3, 'number 3']] as const) {
      const result = empty.parse(value)
      expect(result).to.deep.equal({
        ok: false,
        issues: [{ path: '', expected: 'object', got, message: `The arguments should be object, but got ${got}` }],
      })
    }
  })

  it('does not parse JSON text: a (truncated) JSON string is just a non-object', () => {
    const result = tool.parse('{"path": "a"')
    expect(issuesOf(result)[0].expected).to.equal('object')
  })

  it('runs Schemastery transforms after ajv', () => {
    const trim = ArgumentSchema.from({ args: Schema.object({ q: Schema.transform(Schema.string(), (value) => value.trim()) }) })
    expect(trim.parse({ q: '  hi ' })).to.deep.equal({ ok: true, value: { q: 'hi' } })
  })

  it('checks dates as Schemastery does and returns a Date', () => {
    const when = ArgumentSchema.from({ args: Schema.object({ at: Schema.date().required() }) })
    const result = when.parse({ at: '2024-05-01T10:00:00Z' })
    expect(result.ok && result.value.at).to.be.instanceOf(Date)
    const bad = when.parse({ at: 'someday' })
    expect(issuesOf(bad)[0]).to.deep.include({ path: 'at', expected: 'string in format "date-time"', got: 'string "someday"' })
  })

  it('reports what only Schemastery rejects, with its path', () => {
    const insensitive = ArgumentSchema.from({ args: Schema.object({ code: Schema.string().pattern(/^abc$/i) }) })
    expect(insensitive.parse({ code: 'ABC' }).ok).to.equal(true)
    const result = insensitive.parse({ code: 'xyz' })
    expect(issuesOf(result)).to.have.length(1)
    expect(issuesOf(result)[0]).to.include({ path: 'code', expected: 'string matching /^abc$/i', got: 'string "xyz"' })
  })

  it('turns a throwing transform into one issue at the root', () => {
    const boom = ArgumentSchema.from({
      args: Schema.object({ x: Schema.transform(Schema.string(), () => { throw new Error('boom') }) }),
    })
    const result = boom.parse({ x: 'a' })
    expect(issuesOf(result)).to.deep.equal([{ path: '', expected: 'valid arguments', got: 'object with key x', message: 'The arguments were rejected: boom' }])
  })

  it('validates a tool with a raw JSON Schema and returns the input as is', () => {
    const raw = ArgumentSchema.from({
      parameters: {
        $schema: 'http://json-schema.org/draft-07/schema#',
        type: 'object',
        properties: { q: { type: 'string', description: 'Query.' }, k: { type: 'integer', minimum: 1 } },
        required: ['q'],
        additionalProperties: false,
      },
    })
    expect(raw.compileError).to.equal(undefined)
    const value = { q: 'x' }
    const ok = raw.parse(value)
    expect(ok.ok && ok.value).to.equal(value)
    const bad = raw.parse({ k: 0, other: true })
    expect(brief(bad)).to.deep.equal([
      ['q', 'required property "q"', 'missing'],
      ['other', 'no property "other"', 'boolean true'],
      ['k', 'number >= 1', 'number 0'],
    ])
    expect(raw.jsonSchema('zh-CN').properties.q.description).to.equal('Query.')
  })

  it('compiles 2020-12 schemas from MCP servers as draft-07', () => {
    const raw = ArgumentSchema.from({
      parameters: { $schema: 'https://json-schema.org/draft/2020-12/schema', type: 'object', properties: { a: { type: 'number' } } },
    })
    expect(raw.compileError).to.equal(undefined)
    expect(raw.parse({ a: 'x' }).ok).to.equal(false)
  })

  it('records an uncompilable raw schema and then accepts any object as is', () => {
    const parameters = { type: 'object', properties: { a: { $ref: '#/definitions/missing' } } }
    let broken: ArgumentSchema
    expect(() => { broken = ArgumentSchema.from({ parameters }) }).not.to.throw()
    expect(broken!.compileError).to.be.a('string').and.match(/missing/)
    const value = { a: 1, b: [2] }
    const result = broken!.parse(value)
    expect(result.ok && result.value).to.equal(value)
    expect(broken!.parse('text').ok).to.equal(false)
    expect(broken!.parse(undefined)).to.deep.equal({ ok: true, value: {} })
  })

  it('does not throw for a cyclic raw schema', () => {
    const parameters: any = { type: 'object', properties: {} }
    parameters.properties.self = parameters
    const cyclic = ArgumentSchema.from({ parameters })
    expect(cyclic.compileError).to.be.a('string')
    expect(cyclic.parse({ a: 1 }).ok).to.equal(true)
  })

  it('accepts any object when a definition has neither args nor parameters', () => {
    const none = ArgumentSchema.from({})
    expect(none.jsonSchema()).to.deep.equal({ type: 'object', properties: {} })
    expect(none.parse({ x: 1 })).to.deep.equal({ ok: true, value: { x: 1 } })
    expect(none.parse(undefined)).to.deep.equal({ ok: true, value: {} })
  })

  it('validates non-object schemas (result schemas) without the object rules', () => {
    const result = ArgumentSchema.from({ args: Schema.string() })
    expect(result.parse('x')).to.deep.equal({ ok: true, value: 'x' })
    expect(result.parse(undefined)).to.deep.equal({ ok: true, value: undefined })
    expect(ArgumentSchema.from({ args: Schema.string().required() }).parse(undefined).ok).to.equal(false)
    const bad = result.parse(3)
    expect(issuesOf(bad)[0]).to.deep.include({ path: '', expected: 'string', got: 'number 3' })
  })

  it('describes values briefly', () => {
    expect(describeValue('x'.repeat(100))).to.equal(`string "${'x'.repeat(40)}…"`)
    expect(describeValue(undefined)).to.equal('missing')
    expect(describeValue(null)).to.equal('null')
    expect(describeValue(true)).to.equal('boolean true')
    expect(describeValue({})).to.equal('empty object')
    expect(describeValue({ a: 1, b: 2 })).to.equal('object with keys a, b')
  })

  it('shares compiled validators between equal schemas and parses fast', () => {
    const make = () => Schema.object({ path: Schema.string().required(), limit: Schema.natural().default(10) })
    const a = ArgumentSchema.from({ args: make() })
    const b = ArgumentSchema.from({ args: make() })
    expect((a as any).validate).to.equal((b as any).validate)
    const value = { path: 'a.txt' }
    for (let i = 0; i < 1000; i++) a.parse(value)
    const start = process.hrtime.bigint()
    for (let i = 0; i < 10000; i++) a.parse(value)
    const perCall = Number(process.hrtime.bigint() - start) / 10000 / 1000
    expect(perCall, `${perCall.toFixed(2)} µs per parse`).to.be.below(25)
  })
})
