import { ToolEffect } from '../types'

/**
 * A permission mode (issue 3, item 3; DESIGN.md "Permissions"): what a
 * caller may do when no rule matches.
 *
 * | mode | read | write | exec |
 * |---|---|---|---|
 * | `read-only` | allow | deny | deny |
 * | `files` | allow | allow inside the workDir, deny elsewhere | deny |
 * | `auto` | allow | ask | ask |
 * | `allow` | allow | allow | allow |
 *
 * Reads pass in every mode (the seed's effect pre-check: "读取可以直接放行").
 * `allow` is only for level 5; anyone lower is downgraded to `auto`.
 */
export type PermissionMode = 'read-only' | 'files' | 'auto' | 'allow'

/** Every mode, strictest first. */
export const permissionModes: readonly PermissionMode[] = ['read-only', 'files', 'auto', 'allow']

/** Whether a string names a mode. */
export function isPermissionMode(value: unknown): value is PermissionMode {
  return permissionModes.includes(value as PermissionMode)
}

const ranks: Record<PermissionMode, number> = { 'read-only': 0, files: 1, auto: 2, allow: 3 }

/** The strictness rank of a mode: 0 (`read-only`) to 3 (`allow`); 3 for anything that is not a mode (no restriction). */
export function modeRank(mode: PermissionMode | undefined): number {
  return ranks[mode] ?? 3
}

/** The strictest of some modes (earliest in {@link permissionModes}); undefined for none. */
export function strictestMode(modes: (PermissionMode | undefined)[]): PermissionMode | undefined {
  let best: number | undefined
  for (const mode of modes) {
    const rank = permissionModes.indexOf(mode)
    if (rank >= 0 && (best === undefined || rank < best)) best = rank
  }
  return best === undefined ? undefined : permissionModes[best]
}

/** A mode's default answer for one effect, with the code that explains it. */
export interface ModeDefault {
  decision: 'allow' | 'ask' | 'deny'
  code: 'mode-allow' | 'mode-ask' | 'mode-deny' | 'files-outside'
}

const allowed: ModeDefault = Object.freeze({ decision: 'allow', code: 'mode-allow' })
const asked: ModeDefault = Object.freeze({ decision: 'ask', code: 'mode-ask' })
const denied: ModeDefault = Object.freeze({ decision: 'deny', code: 'mode-deny' })
const outside: ModeDefault = Object.freeze({ decision: 'deny', code: 'files-outside' })

/**
 * The mode table above for one effect. `insideWorkDir` says whether the
 * action's target path resolves inside the workDir (only `files` reads
 * it). Returns one of four shared, frozen answers.
 */
export function modeDefault(mode: PermissionMode, effect: ToolEffect, insideWorkDir: boolean): ModeDefault {
  if (effect === 'read' || mode === 'allow') return allowed
  switch (mode) {
    case 'read-only': return denied
    case 'files':
      if (effect === 'exec') return denied
      return insideWorkDir ? allowed : outside
    case 'auto': return asked
  }
}
