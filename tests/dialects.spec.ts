import { expect } from 'chai'
import { Ajv } from 'ajv'
import { Ajv2020 } from 'ajv/dist/2020'
import { Schema } from 'koishi'
import { createApp, TestApp } from './helpers/app'
import { toStrictSchema, stripStrictNulls } from '../src/modes/strict'

/*
 * Each dialect's output against its provider's documented rules. The rules
 * are written out here from the providers' documentation (not imported from
 * src/), so a converter that drifts from them fails:
 *
 * - OpenAI strict mode: https://platform.openai.com/docs/guides/structured-outputs#supported-schemas
 *   and https://platform.openai.com/docs/guides/function-calling#strict-mode
 * - Anthropic: https://platform.claude.com/docs/agents-and-tools/tool-use/define-tools
 *   (name `^[a-zA-Z0-9_-]{1,128}$`, `input_schema` a JSON Schema object,
 *   validated as draft 2020-12)
 * - Gemini: https://ai.google.dev/api/caching#Schema (the Schema fields) and
 *   https://ai.google.dev/gemini-api/docs/function-calling (function declarations)
 */

const openaiStrictKeywords = new Set([
  'type', 'description', 'title', 'properties', 'required', 'additionalProperties', 'items', 'enum', 'const', 'anyOf',
  'pattern', 'format', 'multipleOf', 'maximum', 'exclusiveMaximum', 'minimum', 'exclusiveMinimum', 'minItems', 'maxItems',
  '$ref', '$defs',
])
const openaiStrictFormats = ['date-time', 'time', 'date', 'duration', 'email', 'hostname', 'ipv4', 'ipv6', 'uuid']

/** Problems of a schema under OpenAI strict mode's documented rules. */
function strictViolations(schema: any, path = '$', depth = 1): string[] {
  const problems: string[] = []
  if (depth > 10) problems.push(`${path}: nesting deeper than 10`)
  for (const key of Object.keys(schema)) {
    if (!openaiStrictKeywords.has(key)) problems.push(`${path}: keyword ${key} is not supported`)
  }
  if (schema.format && !openaiStrictFormats.includes(schema.format)) problems.push(`${path}: format ${schema.format}`)
  if (!('type' in schema) && !schema.anyOf && !schema.enum && !('const' in schema) && !schema.$ref) problems.push(`${path}: no type`)
  const types = [].concat(schema.type ?? [])
  if (types.includes('object')) {
    if (schema.additionalProperties !== false) problems.push(`${path}: additionalProperties must be false`)
    const keys = Object.keys(schema.properties ?? {})
    if (JSON.stringify([...(schema.required ?? [])].sort()) !== JSON.stringify([...keys].sort())) problems.push(`${path}: every property must be required`)
    for (const key of keys) problems.push(...strictViolations(schema.properties[key], `${path}.${key}`, depth + 1))
  }
  if (schema.items) problems.push(...strictViolations(schema.items, `${path}[]`, depth + 1))
  for (const [index, member] of (schema.anyOf ?? []).entries()) problems.push(...strictViolations(member, `${path}|${index}`, depth))
  return problems
}

const geminiFields = new Set([
  'type', 'format', 'title', 'description', 'nullable', 'enum', 'maxItems', 'minItems', 'properties', 'required',
  'minProperties', 'maxProperties', 'minLength', 'maxLength', 'pattern', 'example', 'anyOf', 'propertyOrdering',
  'default', 'items', 'minimum', 'maximum',
])
const geminiTypeEnum = ['STRING', 'NUMBER', 'INTEGER', 'BOOLEAN', 'ARRAY', 'OBJECT', 'NULL']
const geminiFormatsByType: Record<string, string[]> = { STRING: ['enum', 'date-time'], NUMBER: ['float', 'double'], INTEGER: ['int32', 'int64'] }

/** Problems of a schema under Gemini's Schema object. */
function geminiViolations(schema: any, path = '$'): string[] {
  const problems: string[] = []
  for (const key of Object.keys(schema)) if (!geminiFields.has(key)) problems.push(`${path}: field ${key} does not exist`)
  if (!schema.anyOf) {
    if (!geminiTypeEnum.includes(schema.type)) problems.push(`${path}: type ${JSON.stringify(schema.type)} is not a Type`)
  }
  if (schema.enum && !(Array.isArray(schema.enum) && schema.enum.every((value) => typeof value === 'string'))) problems.push(`${path}: enum must be strings`)
  if (schema.format && !geminiFormatsByType[schema.type]?.includes(schema.format)) problems.push(`${path}: format ${schema.format}`)
  if ('nullable' in schema && typeof schema.nullable !== 'boolean') problems.push(`${path}: nullable must be a boolean`)
  if (schema.properties) {
    if (!Object.keys(schema.properties).length) problems.push(`${path}: empty properties`)
    for (const name of schema.required ?? []) if (!(name in schema.properties)) problems.push(`${path}: required ${name} is not a property`)
    for (const [name, inner] of Object.entries(schema.properties)) problems.push(...geminiViolations(inner, `${path}.${name}`))
  }
  if (schema.type === 'ARRAY' && !schema.items) problems.push(`${path}: an ARRAY needs items`)
  if (schema.items) problems.push(...geminiViolations(schema.items, `${path}[]`))
  for (const [index, member] of (schema.anyOf ?? []).entries()) problems.push(...geminiViolations(member, `${path}|${index}`))
  return problems
}

/** A Schemastery schema with every kind of field. */
const kitchenSink = Schema.object({
  path: Schema.string().required().description('File path'),
  mode: Schema.union(['read', 'write']).default('read').description('Open mode'),
  limit: Schema.natural().max(100).default(10),
  ratio: Schema.number().min(0).max(1),
  name: Schema.string().min(2).max(20).pattern(/^[a-z]+$/),
  when: Schema.date(),
  flag: Schema.boolean(),
  exact: Schema.const('fixed').required(),
  tags: Schema.array(String).max(5),
  pair: Schema.tuple([String, Number]),
  env: Schema.dict(String),
  nested: Schema.object({ inner: Schema.string().required(), extra: Schema.number() }),
  either: Schema.union([String, Number]),
  anything: Schema.any(),
  merged: Schema.intersect([Schema.object({ a: Schema.string() }), Schema.object({ b: Schema.number().required() })]),
})

/** A raw MCP-style JSON Schema with references and later-draft keywords. */
const rawMCP = {
  $schema: 'http://json-schema.org/draft-07/schema#',
  type: 'object',
  properties: {
    target: { $ref: '#/$defs/target' },
    count: { type: ['integer', 'null'], exclusiveMinimum: 0 },
    kind: { oneOf: [{ const: 'a' }, { const: 'b' }] },
    level: { enum: [1, 2, 3] },
    pair: { type: 'array', items: [{ type: 'string' }, { type: 'number' }], additionalItems: false },
  },
  required: ['target'],
  dependencies: { count: ['kind'] },
  $defs: { target: { type: 'object', properties: { host: { type: 'string', format: 'hostname' }, port: { type: 'integer' } }, required: ['host'] } },
}

describe('declaration dialects', () => {
  let test: TestApp
  before(async () => {
    test = await createApp({ read: { enabled: true } })
    test.app.tools.define({ name: 'sink', description: 'Every field kind.', args: kitchenSink, traits: { effect: 'read' }, run: () => 'ok' })
    test.app.tools.define({ name: 'simple', description: 'A strict-friendly tool.', traits: { effect: 'read' }, run: () => 'ok', args: Schema.object({
      city: Schema.string().required().description('City'),
      unit: Schema.union(['c', 'f']).default('c'),
      days: Schema.natural().max(7),
      filters: Schema.object({ rain: Schema.boolean() }),
      stops: Schema.array(Schema.object({ name: Schema.string().required() })),
    }) })
    test.app.tools.define({ name: 'mcp_like', description: 'Raw schema.', parameters: rawMCP, traits: { effect: 'read' }, run: () => 'ok' })
    test.app.tools.define({ name: 'no_args', description: 'No parameters.', traits: { effect: 'read' }, run: () => 'ok' })
  })
  after(() => test.dispose())

  const find = (dialect: string, name: string) => test.app.tools.declarations({}, { dialect: dialect as any })
    .find((item) => (item.function ?? item).name === name)

  describe('openai-strict', () => {
    it('marks strict-expressible tools strict and obeys every documented rule', () => {
      for (const name of ['simple', 'read', 'no_args']) {
        const declaration = find('openai-strict', name)
        expect(declaration.type).to.equal('function')
        expect(declaration.function.strict, name).to.equal(true)
        expect(declaration.function.parameters.type).to.equal('object')
        expect(strictViolations(declaration.function.parameters), name).to.deep.equal([])
      }
    })

    it('turns optional fields into required nullable ones and notes dropped defaults', () => {
      const { parameters } = find('openai-strict', 'simple').function
      expect(parameters.required).to.deep.equal(['city', 'unit', 'days', 'filters', 'stops'])
      expect(parameters.properties.city).to.deep.equal({ type: 'string', description: 'City' })
      expect(parameters.properties.unit).to.deep.equal({ type: ['string', 'null'], enum: ['c', 'f', null], description: 'Default: "c".' })
      expect(parameters.properties.days.type).to.deep.equal(['integer', 'null'])
      expect(parameters.properties.filters.type).to.deep.equal(['object', 'null'])
      expect(parameters.properties.filters.additionalProperties).to.equal(false)
      expect(parameters.properties.stops.items).to.deep.equal({ type: 'object', properties: { name: { type: 'string' } }, required: ['name'], additionalProperties: false })
    })

    it('a schema strict mode cannot express is sent non-strict and unchanged', () => {
      const declaration = find('openai-strict', 'sink')
      expect(declaration.function.strict).to.equal(false)
      expect(declaration.function.parameters).to.deep.equal(find('openai', 'sink').function.parameters)
      expect(toStrictSchema(find('openai', 'sink').function.parameters)).to.deep.include({ ok: false })
    })

    it('resolves $ref, reads oneOf as anyOf and refuses dependencies, for raw MCP schemas', () => {
      expect(find('openai-strict', 'mcp_like').function.strict).to.equal(false)
      const { dependencies, ...rest } = rawMCP
      const withoutTuple = { ...rest, properties: { ...rest.properties, pair: undefined } }
      delete withoutTuple.properties.pair
      const result = toStrictSchema(withoutTuple) as any
      expect(result.ok).to.equal(true)
      expect(strictViolations(result.schema)).to.deep.equal([])
      expect(result.schema.properties.target.properties.host).to.deep.equal({ type: 'string', format: 'hostname' })
      expect(result.schema.properties.kind.anyOf).to.deep.equal([{ const: 'a' }, { const: 'b' }, { type: 'null' }])
    })

    it('never changes the shared frozen schema', () => {
      const before = JSON.stringify(find('openai', 'simple').function.parameters)
      find('openai-strict', 'simple')
      expect(JSON.stringify(find('openai', 'simple').function.parameters)).to.equal(before)
      expect(Object.isFrozen(find('openai', 'simple').function.parameters)).to.equal(true)
    })

    it('strips the nulls a strict model sends for optional fields before the tool sees them', () => {
      const parameters = find('openai', 'simple').function.parameters
      expect(stripStrictNulls(parameters, { city: 'Paris', unit: null, days: null, filters: { rain: null }, stops: [{ name: 'A' }] }))
        .to.deep.equal({ city: 'Paris', filters: {}, stops: [{ name: 'A' }] })
    })

    it('the strict schema accepts the same arguments as the original once nulls are stripped', () => {
      const original = find('openai', 'simple').function.parameters
      const strict = find('openai-strict', 'simple').function.parameters
      const ajv = new Ajv({ strict: false, logger: false })
      const full = { city: 'Oslo', unit: 'f', days: 3, filters: { rain: true }, stops: [] }
      const sparse = { city: 'Oslo', unit: null, days: null, filters: null, stops: null }
      expect(ajv.validate(strict, full)).to.equal(true)
      expect(ajv.validate(strict, sparse)).to.equal(true)
      expect(ajv.validate(original, stripStrictNulls(original, sparse))).to.equal(true)
      expect(ajv.validate(strict, { city: 'Oslo' })).to.equal(false)
    })
  })

  describe('anthropic', () => {
    it('gives name, description and an input_schema that is a valid draft 2020-12 object schema', () => {
      const ajv = new Ajv2020({ strict: false, logger: false })
      for (const declaration of test.app.tools.declarations({}, { dialect: 'anthropic' })) {
        expect(Object.keys(declaration).sort()).to.deep.equal(['description', 'input_schema', 'name'])
        expect(declaration.name).to.match(/^[a-zA-Z0-9_-]{1,128}$/)
        expect(declaration.input_schema.type).to.equal('object')
        expect(ajv.validateSchema(declaration.input_schema), `${declaration.name}: ${ajv.errorsText()}`).to.equal(true)
        expect(() => ajv.compile(declaration.input_schema)).not.to.throw()
      }
    })

    it('rewrites draft-07 tuples and dependencies to their 2020-12 form, keeping their meaning', () => {
      const { input_schema } = find('anthropic', 'mcp_like')
      expect(input_schema.properties.pair).to.deep.equal({ type: 'array', prefixItems: [{ type: 'string' }, { type: 'number' }], items: false })
      expect(input_schema.dependentRequired).to.deep.equal({ count: ['kind'] })
      expect(input_schema.$schema).to.equal(undefined)
      const draft07 = new Ajv({ strict: false, logger: false })
      const draft2020 = new Ajv2020({ strict: false, logger: false })
      const { $schema, ...original } = rawMCP
      for (const sample of [
        { target: { host: 'a' }, pair: ['x', 1] },
        { target: { host: 'a' }, pair: ['x', 1, 2] },
        { target: { host: 'a' }, count: 2 },
        { target: { host: 'a' }, count: 2, kind: 'a' },
        { target: {} },
      ]) {
        expect(draft2020.validate(input_schema, sample), JSON.stringify(sample)).to.equal(draft07.validate(original, sample))
      }
    })
  })

  describe('gemini', () => {
    it('uses only Schema fields, Type enum values, string enums and documented formats', () => {
      for (const declaration of test.app.tools.declarations({}, { dialect: 'gemini' })) {
        expect(Object.keys(declaration).every((key) => ['name', 'description', 'parameters'].includes(key))).to.equal(true)
        expect(declaration.name).to.match(/^[a-zA-Z0-9_.:-]{1,64}$/)
        if (declaration.parameters) {
          expect(declaration.parameters.type).to.equal('OBJECT')
          expect(geminiViolations(declaration.parameters), declaration.name).to.deep.equal([])
        }
      }
    })

    it('leaves parameters out for a tool without parameters', () => {
      expect(find('gemini', 'no_args')).to.deep.equal({ name: 'no_args', description: 'No parameters.' })
    })

    it('rewrites what Gemini lacks and says so in the description', () => {
      const { parameters } = find('gemini', 'sink')
      expect(parameters.properties.mode).to.deep.equal({ type: 'STRING', enum: ['read', 'write'], description: 'Open mode', default: 'read' })
      expect(parameters.properties.exact).to.deep.equal({ type: 'STRING', enum: ['fixed'] })
      expect(parameters.properties.when).to.deep.equal({ type: 'STRING', format: 'date-time' })
      expect(parameters.properties.env.type).to.equal('OBJECT')
      expect(parameters.properties.env.description).to.equal('An object with any keys.')
      expect(parameters.properties.either.anyOf).to.deep.equal([{ type: 'STRING' }, { type: 'NUMBER' }])
      expect(parameters.properties.anything.type).to.equal('STRING')
      expect(parameters.properties.pair.items.anyOf).to.deep.equal([{ type: 'STRING' }, { type: 'NUMBER' }])
      expect(parameters.properties.merged.properties).to.have.keys('a', 'b')
      expect(parameters.properties.merged.required).to.deep.equal(['b'])
      const raw = find('gemini', 'mcp_like').parameters
      expect(raw.properties.target).to.deep.equal({ type: 'OBJECT', properties: { host: { type: 'STRING', description: 'Format: hostname.' }, port: { type: 'INTEGER' } }, required: ['host'] })
      expect(raw.properties.count).to.deep.equal({ type: 'INTEGER', nullable: true, description: 'Greater than 0.' })
      expect(raw.properties.kind).to.deep.equal({ anyOf: [{ type: 'STRING', enum: ['a'] }, { type: 'STRING', enum: ['b'] }] })
      expect(raw.properties.level).to.deep.equal({ type: 'INTEGER', description: 'One of: 1, 2, 3.' })
    })
  })
})
