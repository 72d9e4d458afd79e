import type { ErrorObject } from 'ajv'
import { ArgumentIssue } from '../types'

/*
 * Turns validator errors (ajv, Schemastery) into ArgumentIssue records the
 * model can correct from: a dotted path, what was expected, what came, and a
 * plain sentence (DESIGN.md pipeline step 3: "field path, expected, got").
 */

const maxText = 40

/**
 * A short description of a value for `got`: `missing`, `null`,
 * `string "abc…"` (cut to ~40 characters), `number 3`, `boolean true`,
 * `array of 2 items`, `object with keys a, b`.
 */
export function describeValue(value: unknown): string {
  if (value === undefined) return 'missing'
  if (value === null) return 'null'
  switch (typeof value) {
    case 'string': return `string ${JSON.stringify(value.length > maxText ? value.slice(0, maxText) + '…' : value)}`
    case 'number': return `number ${value}`
    case 'boolean': return `boolean ${value}`
    case 'bigint': return `bigint ${value}`
    case 'function': return 'function'
    case 'symbol': return 'symbol'
  }
  if (Array.isArray(value)) return `array of ${value.length} item${value.length === 1 ? '' : 's'}`
  const keys = Object.keys(value as object)
  if (!keys.length) return 'empty object'
  const list = keys.slice(0, 5).join(', ') + (keys.length > 5 ? ', …' : '')
  return `object with key${keys.length === 1 ? '' : 's'} ${list}`
}

/** `/items/0/name` → `items.0.name`; `''` stays `''`. */
export function pointerToPath(pointer: string): string {
  if (!pointer) return ''
  return pointer.slice(1).split('/').map((part) => part.replace(/~1/g, '/').replace(/~0/g, '~')).join('.')
}

function join(path: string, key: string | number) {
  return path ? `${path}.${key}` : `${key}`
}

function where(path: string) {
  return path ? `"${path}"` : 'The arguments'
}

function json(value: unknown) {
  const text = JSON.stringify(value)
  return text === undefined ? String(value) : text
}

/** An issue whose sentence reads `<where> should be <expected>, but got <got>`. */
export function mismatch(path: string, expected: string, value: unknown): ArgumentIssue {
  const got = describeValue(value)
  return { path, expected, got, message: `${where(path)} should be ${expected}, but got ${got}` }
}

/**
 * An issue for a property the schema does not have (a model guessing a
 * name, `offset` for `line_from`): its sentence names the known ones.
 */
export function unknownProperty(key: string, known: readonly string[]): ArgumentIssue {
  const names = known.length ? known.join(', ') : 'none'
  return {
    path: key,
    expected: `one of the properties ${names}`,
    got: 'an unknown property',
    message: `"${key}" is not a property of this tool (it takes: ${names})`,
    text: { path: `chatluna-tools.error.issue-unknown${known.length ? '' : '-none'}`, params: { name: key, names } },
  }
}

/** An issue for a required property that is absent. */
export function missing(parent: string, key: string): ArgumentIssue {
  const path = join(parent, key)
  const within = parent ? ` in "${parent}"` : ''
  return {
    path,
    expected: `required property "${key}"`,
    got: 'missing',
    message: `Missing required property "${key}"${within}`,
    text: { path: 'chatluna-tools.error.issue-missing', params: { name: path } },
  }
}

function withoutNull<T>(values: T[]): T[] {
  const rest = values.filter((value) => value !== null && value !== 'null')
  return rest.length ? rest : values
}

/** `one of "a", "b"`; a single value is just that value. */
function oneOf(values: unknown[]) {
  const list = withoutNull(values)
  return list.length === 1 ? json(list[0]) : `one of ${list.map(json).join(', ')}`
}

/** A phrase for what a JSON Schema accepts, for summaries of `anyOf` failures. */
function describeSchema(schema: any): string[] {
  if (schema === false) return ['absent']
  if (!schema || typeof schema !== 'object') return ['any value']
  if ('const' in schema) return [json(schema.const)]
  if (Array.isArray(schema.enum)) return [oneOf(schema.enum)]
  if (schema.type) return withoutNull([].concat(schema.type))
  const branches = schema.anyOf ?? schema.oneOf
  if (Array.isArray(branches)) return branches.flatMap(describeSchema)
  if (schema.properties) return ['object']
  if (schema.not && !Object.keys(schema.not).length) return ['absent']
  return ['any value']
}

function alternatives(branches: unknown[]): string {
  const phrases = [...new Set(withoutNull((branches ?? []).flatMap(describeSchema)))]
  if (phrases.length <= 1) return phrases[0] ?? 'a valid value'
  return phrases.slice(0, -1).join(', ') + ' or ' + phrases[phrases.length - 1]
}

/** One ajv error (outside any anyOf/oneOf) as an issue; `undefined` to drop it. */
function fromError(error: ErrorObject): ArgumentIssue | undefined {
  const path = pointerToPath(error.instancePath)
  const { params, data } = error
  switch (error.keyword) {
    case 'required': return missing(path, params.missingProperty)
    case 'type': return mismatch(path, withoutNull(String(params.type).split(',')).join(' or '), data)
    case 'enum': return mismatch(path, oneOf(params.allowedValues), data)
    case 'const': return mismatch(path, json(params.allowedValue), data)
    case 'minimum': return mismatch(path, `number >= ${params.limit}`, data)
    case 'maximum': return mismatch(path, `number <= ${params.limit}`, data)
    case 'exclusiveMinimum': return mismatch(path, `number > ${params.limit}`, data)
    case 'exclusiveMaximum': return mismatch(path, `number < ${params.limit}`, data)
    case 'multipleOf': return mismatch(path, `multiple of ${params.multipleOf}`, data)
    case 'minLength': return mismatch(path, `string of at least ${params.limit} characters`, data)
    case 'maxLength': return mismatch(path, `string of at most ${params.limit} characters`, data)
    case 'pattern': return mismatch(path, `string matching /${params.pattern}/`, data)
    case 'format': return mismatch(path, `string in format "${params.format}"`, data)
    case 'minItems': return mismatch(path, `array of at least ${params.limit} items`, data)
    case 'maxItems':
    case 'additionalItems': return mismatch(path, `array of at most ${params.limit} items`, data)
    case 'uniqueItems': return mismatch(path, 'array without duplicate items', data)
    case 'minProperties': return mismatch(path, `object with at least ${params.limit} properties`, data)
    case 'maxProperties': return mismatch(path, `object with at most ${params.limit} properties`, data)
    case 'additionalProperties': {
      const key = params.additionalProperty
      const message = `Unknown property "${key}"${path ? ` in "${path}"` : ''}`
      return { path: join(path, key), expected: `no property "${key}"`, got: describeValue(data?.[key]), message }
    }
    case 'propertyNames': {
      const name = params.propertyName
      const got = `property name ${json(name)}`
      return { path, expected: 'valid property names', got, message: `${where(path)} has an invalid property name ${json(name)}` }
    }
    case 'dependencies': return missing(path, params.missingProperty)
    case 'not': {
      const excluded = Object.keys(error.schema ?? {}).length
      return mismatch(path, excluded ? 'a value not matching the excluded schema' : 'absent', data)
    }
    case 'false schema': return mismatch(path, 'absent', data)
    case 'if': return undefined
    default: return mismatch(path, error.message?.replace(/^must /, '') ?? 'a valid value', data)
  }
}

/** Whether `error` sits inside the branches of the anyOf/oneOf `group`. */
function within(error: ErrorObject, group: ErrorObject) {
  if (error === group || !error.schemaPath.startsWith(group.schemaPath + '/')) return false
  return error.instancePath === group.instancePath || error.instancePath.startsWith(group.instancePath + '/')
}

function isGroup(error: ErrorObject) {
  return error.keyword === 'anyOf' || error.keyword === 'oneOf'
}

const shallowKeywords = new Set(['type', 'const', 'enum', 'not', 'false schema'])

/**
 * A failed anyOf/oneOf. When no branch matched the value's kind, one issue
 * lists the alternatives. Otherwise the errors of the branch that matched
 * the kind and failed deeper (e.g. the object branch with a wrong field) are
 * the useful ones: among several, the one whose discriminator (a const or
 * enum property) fits, else the one with the fewest errors.
 */
function fromGroup(group: ErrorObject, errors: ErrorObject[]): ArgumentIssue[] {
  const path = pointerToPath(group.instancePath)
  if (group.keyword === 'oneOf' && group.params?.passingSchemas) {
    return [mismatch(path, `exactly one of ${alternatives(group.schema as unknown[])}`, group.data)]
  }
  const byBranch = new Map<number, ErrorObject[]>()
  for (const error of errors) {
    if (!within(error, group)) continue
    const index = +error.schemaPath.slice(group.schemaPath.length + 1).split('/')[0]
    if (!byBranch.has(index)) byBranch.set(index, [])
    byBranch.get(index)!.push(error)
  }
  const shallow = (index: number, list: ErrorObject[]) => list.some((error) => {
    return error.instancePath === group.instancePath
      && shallowKeywords.has(error.keyword)
      && error.schemaPath === `${group.schemaPath}/${index}/${error.keyword}`
  })
  const deep = [...byBranch].filter(([index, list]) => !shallow(index, list))
  if (!deep.length) return [mismatch(path, alternatives(group.schema as unknown[]), group.data)]
  // A branch whose discriminator (a const/enum property) mismatched is not the one meant.
  const depth = group.instancePath.split('/').length + 1
  const meant = deep.filter(([index, list]) => !list.some((error) => {
    const rest = error.schemaPath.slice(`${group.schemaPath}/${index}/`.length)
    return /^properties\/[^/]+\/(const|enum)$/.test(rest) && error.instancePath.split('/').length === depth
  }))
  const pool = meant.length ? meant : deep
  // Otherwise the branch that came closest (fewest errors, first on ties).
  const best = pool.reduce((a, b) => (b[1].length < a[1].length ? b : a))
  return collect(best[1])
}

function collect(errors: ErrorObject[]): ArgumentIssue[] {
  const groups = errors.filter(isGroup)
  const issues: ArgumentIssue[] = []
  for (const error of errors) {
    if (groups.some((group) => within(error, group))) continue
    if (isGroup(error)) {
      issues.push(...fromGroup(error, errors))
    } else if (!(error as any).propertyName) {
      // Errors inside `propertyNames` are reported once by the outer error.
      const issue = fromError(error)
      if (issue) issues.push(issue)
    }
  }
  return issues
}

/**
 * Converts ajv errors (produced with `allErrors` and `verbose`) into issues,
 * folding the noise of anyOf/oneOf branches and dropping duplicates.
 */
export function fromAjvErrors(errors: ErrorObject[] | null | undefined): ArgumentIssue[] {
  const seen = new Set<string>()
  return collect(errors ?? []).filter((issue) => {
    const key = `${issue.path}\n${issue.expected}`
    if (seen.has(key)) return false
    seen.add(key)
    return true
  })
}

function valueAt(root: unknown, path: (keyof any)[]): unknown {
  let value: any = root
  for (const key of path) {
    if (value === null || typeof value !== 'object') return undefined
    value = value[key as any]
  }
  return value
}

/**
 * Converts an error thrown by a Schemastery schema into one issue. A
 * `ValidationError` carries the path (`options.path`) and a message such as
 * `expected string but got 3` or `missing required value`; anything else
 * (e.g. a transform callback that throws) becomes an issue at `''`.
 */
export function fromSchemasteryError(error: any, root: unknown): ArgumentIssue {
  const segments: (keyof any)[] = Array.isArray(error?.options?.path) ? error.options.path : []
  const path = segments.map(String).join('.')
  const value = valueAt(root, segments)
  let text = String(error?.message ?? error)
  if (segments.length && text.startsWith('$')) text = text.slice(text.indexOf(' ') + 1)
  if (error?.name !== 'ValidationError') {
    return { path: '', expected: 'valid arguments', got: describeValue(root), message: `The arguments were rejected: ${text}` }
  }
  if (text === 'missing required value') {
    const key = String(segments[segments.length - 1] ?? '')
    if (key) return missing(segments.slice(0, -1).map(String).join('.'), key)
    return mismatch('', 'a value', value)
  }
  const regexp = /^expect string to match regexp (.+)$/.exec(text)?.[1]
  const expected = regexp ? `string matching ${regexp}` : /^expected (.+?) but got /.exec(text)?.[1]
  if (expected) return mismatch(path, expected, value)
  return { path, expected: 'a valid value', got: describeValue(value), message: path ? `"${path}": ${text}` : text }
}
