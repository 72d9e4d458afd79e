import { Ajv, type ValidateFunction } from 'ajv'
import { RE2JS } from 're2js'
import { Dict, Schema } from 'koishi'
import { ArgumentIssue, JSONSchema } from '../types'
import { fromAjvErrors, fromSchemasteryError, mismatch, unknownProperty } from './issues'
import { isSchemastery, toJSONSchema } from './json-schema'
import { flatObject } from './flat-object'

/*
 * Argument validation for the call pipeline (DESIGN.md step 3): wrong types
 * and missing fields become a structured list of issues, never an exception.
 * ajv checks the JSON Schema (so the model is judged by exactly what it was
 * shown); for Schemastery tools the schema itself then runs to apply
 * defaults and transforms (for a flat object, `flat-object.ts` applies the
 * defaults exactly as it would, without running it).
 */

/**
 * Outcome of {@link ArgumentSchema.parse}. The project compiles without
 * `strictNullChecks`, where `if (result.ok)` does not narrow; compare
 * `result.ok === false`, or read `issues` / `value` directly (the absent one
 * is `undefined`).
 */
export type ParseResult =
  | { ok: true; value: any; issues?: undefined }
  | { ok: false; issues: ArgumentIssue[]; value?: undefined }

/**
 * The regular-expression engine ajv runs `pattern` and `patternProperties`
 * with: RE2JS, a linear-time port of RE2, because the schemas of MCP
 * servers are not ours and the strings are a model's — a pattern such as
 * `^(a+)+$` must not hang the bot (the same rule as the model's own
 * regexes in the built-in tools). A pattern RE2 cannot run (lookarounds,
 * backreferences) accepts every string: the tool checks it itself, as it
 * does for a schema that cannot be compiled.
 */
const re2Engine = Object.assign((pattern: string) => {
  // ajv caches compiled patterns under `toString()`: it must name the pattern.
  const toString = () => pattern
  try {
    const re = RE2JS.compile(pattern)
    return { test: (text: string) => re.test(text), toString }
  } catch {
    return { test: () => true, toString }
  }
}, { code: 'linear-time RE2JS patterns' })

/**
 * The one ajv instance of the module. `strict: false` because raw MCP
 * schemas carry all kinds of extra keywords; `unicodeRegExp: false` matches
 * Schemastery's `new RegExp(source, flags)`; `verbose` gives errors their
 * data and schema for the issue text; patterns run in linear time
 * ({@link re2Engine}). Formats are checked only as far as
 * Schemastery checks them (`date()` accepts whatever `new Date()` parses,
 * `regExp()` whatever `new RegExp()` compiles); other formats (`email`,
 * `uri`, …) are ignored silently, leaving them to the tool.
 */
const ajv = new Ajv({
  allErrors: true,
  strict: false,
  verbose: true,
  logger: false,
  unicodeRegExp: false,
  code: { regExp: re2Engine },
  formats: {
    'date-time': (value: string) => !Number.isNaN(+new Date(value)),
    regex: (value: string) => {
      try {
        return !!new RegExp(value)
      } catch {
        return false
      }
    },
    date: true,
    time: true,
  },
})

const draft07 = /^https?:\/\/json-schema\.org\/draft-07\/schema#?$/

/** Compiled validators by schema text, so a reloaded tool does not compile again. */
const compiled = new Map<string, ValidateFunction>()
const maxCompiled = 512

/**
 * Compiles a JSON Schema with the shared ajv. A `$schema` other than
 * draft-07 is dropped (2019-09 / 2020-12 schemas from MCP servers are mostly
 * valid draft-07). The schema is removed from ajv's own registry right after
 * compiling so that redefining tools does not grow it. Throws ajv's error.
 */
function compile(schema: JSONSchema): ValidateFunction {
  if (typeof schema.$schema === 'string' && !draft07.test(schema.$schema)) {
    const { $schema, ...rest } = schema
    schema = rest
  }
  const key = JSON.stringify(schema)
  let validate = compiled.get(key)
  if (validate) return validate
  try {
    validate = ajv.compile(schema)
  } finally {
    ajv.removeSchema(schema)
  }
  if (compiled.size >= maxCompiled) compiled.delete(compiled.keys().next().value!)
  compiled.set(key, validate)
  return validate
}

function isPlainObject(value: unknown): value is object {
  return !!value && typeof value === 'object' && !Array.isArray(value)
}

function deepFreeze<T>(value: T): T {
  if (value && typeof value === 'object' && !Object.isFrozen(value)) {
    Object.freeze(value)
    for (const key of Object.keys(value)) deepFreeze((value as any)[key])
  }
  return value
}

function clone<T>(value: T): T {
  return JSON.parse(JSON.stringify(value))
}

const emptyObject: JSONSchema = deepFreeze({ type: 'object', properties: {} })

/**
 * The keywords of a converted object whose keys are exactly its
 * `properties`. Anything else lets more keys in: `additionalProperties` (a
 * dict), `allOf` (an intersect with a union of objects, Koishi's
 * conditional fields, or with a dict).
 */
const closedObjectKeys = new Set(['type', 'properties', 'required', 'default'])

/**
 * The argument schema of one tool: its declaration for the model and its
 * validator. Build it once per definition with {@link ArgumentSchema.from};
 * the registry keeps it with the entry.
 */
export class ArgumentSchema {
  /** The Schemastery schema, for tools defined with `args`. */
  readonly schema?: Schema
  /** The raw JSON Schema, for tools defined with `parameters` (MCP). */
  readonly parameters?: JSONSchema
  /**
   * Why the JSON Schema could not be compiled (ajv's message). Set only for
   * a broken raw `parameters`; `parse` then accepts any object as is, and
   * the caller should log a warning. For a Schemastery schema a compile
   * failure only skips ajv: Schemastery still validates.
   */
  readonly compileError?: string
  /** Whether the arguments must be an object (null/undefined then count as `{}`). */
  readonly isObject: boolean
  /**
   * The only top-level keys a Schemastery object schema takes (its
   * `properties`, hidden ones included), or undefined when other keys may come (a dict, a union
   * of objects, an intersect with either, a raw JSON Schema, which keeps
   * its own `additionalProperties`).
   * Another key is an `invalid` issue, not silently ignored.
   */
  readonly properties?: readonly string[]

  private validate?: ValidateFunction
  /** Schemastery's result for a flat object that ajv accepted, without running it ({@link flatObject}). */
  private flat?: (value: Dict) => Dict | undefined
  private declarations = new Map<string, JSONSchema>()

  private constructor(schema: Schema | undefined, parameters: JSONSchema | undefined) {
    if (schema) {
      this.schema = schema
      let json: JSONSchema = {}
      try {
        // Descriptions do not affect validation; null counts as missing, as in Schemastery,
        // which also takes and checks the hidden fields the model is not shown.
        json = toJSONSchema(schema, { descriptions: false, nullable: true, hidden: true })
        this.validate = compile(json)
        this.flat = flatObject(schema)
      } catch {
        // Schemastery alone still validates below.
      }
      this.isObject = json.type === 'object'
      if (this.isObject && json.properties && Object.keys(json).every((key) => closedObjectKeys.has(key))) {
        this.properties = Object.keys(json.properties)
      }
      return
    }
    const raw = isPlainObject(parameters) ? parameters as JSONSchema : emptyObject
    // Tool arguments are always an object unless the schema says otherwise.
    const type = raw.type
    this.isObject = type === undefined || type === 'object' || (Array.isArray(type) && type.includes('object'))
    try {
      this.parameters = deepFreeze(raw === emptyObject ? raw : clone(raw))
      this.validate = compile(this.parameters)
    } catch (error) {
      this.parameters ??= raw
      this.compileError = error?.message ?? String(error)
    }
  }

  /**
   * Builds the argument schema of a definition: `args` (Schemastery) wins
   * over `parameters` (JSON Schema); neither means "an object with any
   * keys". Never throws: an uncompilable `parameters` is recorded in
   * `compileError`.
   */
  static from(def: { args?: Schema; parameters?: JSONSchema }): ArgumentSchema {
    if (isSchemastery(def.args)) return new ArgumentSchema(def.args, undefined)
    return new ArgumentSchema(undefined, def.parameters)
  }

  /**
   * The JSON Schema the model is shown, descriptions in `locale` (a list is
   * tried in order). Cached per locale and deep-frozen: clone before
   * changing it. A raw `parameters` schema is returned as given (frozen copy).
   */
  jsonSchema(locale?: string | string[]): JSONSchema {
    if (!this.schema) return this.parameters!
    const key = Array.isArray(locale) ? locale.join(',') : locale ?? ''
    let result = this.declarations.get(key)
    if (!result) {
      result = deepFreeze(toJSONSchema(this.schema, { locale }))
      this.declarations.set(key, result)
    }
    return result
  }

  /**
   * Validates arguments (already parsed from JSON; malformed JSON is the
   * pipeline's job). For an object schema, `undefined`/`null` count as `{}`
   * and any other non-object is one issue at `''` expecting `object`.
   * A key a Schemastery object does not have is an issue
   * ({@link ArgumentSchema.properties}). Returns the value after Schemastery
   * (defaults applied, transforms run) or the input as is for a raw JSON
   * Schema. Schemastery may normalise nested values in place.
   */
  parse(value: unknown): ParseResult {
    if (this.isObject) {
      if (value === undefined || value === null) value = {}
      else if (!isPlainObject(value)) return { ok: false, issues: [mismatch('', 'object', value)] }
    }
    if (this.properties) {
      const known = this.properties
      const unknown = Object.keys(value as object).filter((key) => !known.includes(key))
      if (unknown.length) {
        // The sentence names the properties the model is shown, not the hidden ones.
        const shown = Object.keys(this.jsonSchema().properties ?? {})
        return { ok: false, issues: unknown.map((key) => unknownProperty(key, shown)) }
      }
    }
    const validate = this.validate
    // A missing non-object value (e.g. a result schema) is Schemastery's to judge.
    const skip = !this.isObject && this.schema && (value === undefined || value === null)
    if (validate && !skip && !validate(value)) {
      return { ok: false, issues: fromAjvErrors(validate.errors) }
    }
    if (!this.schema) return { ok: true, value }
    const flat = validate && this.flat?.(value as Dict)
    if (flat) return { ok: true, value: flat }
    try {
      return { ok: true, value: this.schema(value) }
    } catch (error) {
      return { ok: false, issues: [fromSchemasteryError(error, value)] }
    }
  }
}
