import { ToolOwner } from '../types'

/**
 * Enabled flags of tool owners: skills and MCP servers (visibility layer 5).
 * An owner nobody has switched off counts as enabled.
 */
export class OwnerStates {
  private disabled = new Set<string>()
  private listeners = new Set<() => void>()

  /** `mcp:everything`, `skill:pdf`, … */
  static key(owner: ToolOwner) {
    return `${owner.kind}:${owner.id}`
  }

  /** Whether an owner's tools may be shown (layer 5); a tool without an owner always may. */
  isEnabled(owner: ToolOwner | undefined) {
    return !owner || !this.disabled.has(OwnerStates.key(owner))
  }

  /** Switches an owner on or off; its tools appear or disappear on the next listing. */
  setEnabled(owner: ToolOwner, enabled: boolean) {
    const key = OwnerStates.key(owner)
    if (enabled === !this.disabled.has(key)) return
    if (enabled) this.disabled.delete(key)
    else this.disabled.add(key)
    for (const listener of this.listeners) listener()
  }

  /** Calls `listener` after every change; returns an unsubscribe function. */
  subscribe(listener: () => void) {
    this.listeners.add(listener)
    return () => this.listeners.delete(listener)
  }
}
