import { readdirSync, readFileSync, readlinkSync } from 'fs'

/** One process as `/proc/<pid>/stat` describes it. */
export interface ProcessInfo {
  pid: number
  ppid: number
  /** Process group id. */
  pgid: number
  /** Session id. */
  sid: number
  /** `R`, `S`, `Z` (zombie: already dead, waiting to be reaped), … */
  state: string
  /** Start time in clock ticks since boot: with the pid, identifies a process over time. */
  start: number
}

/** Whether the process table can be read (`/proc`, Linux). */
export const canListProcesses = process.platform === 'linux'

/**
 * Every process of the system from `/proc` (Linux), read synchronously so
 * it can run inside a dispose hook. Processes that vanish while reading
 * are skipped. Returns `[]` elsewhere.
 */
export function listProcesses(): ProcessInfo[] {
  if (!canListProcesses) return []
  const result: ProcessInfo[] = []
  let names: string[]
  try {
    names = readdirSync('/proc')
  } catch {
    return []
  }
  for (const name of names) {
    const first = name.charCodeAt(0)
    if (first < 48 || first > 57) continue
    let stat: string
    try {
      stat = readFileSync(`/proc/${name}/stat`, 'latin1')
    } catch {
      continue
    }
    // "pid (comm) state ppid pgrp session …"; comm may contain spaces and parentheses.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
    result.push({
      pid: Number(name),
      state: fields[0],
      ppid: Number(fields[1]),
      pgid: Number(fields[2]),
      sid: Number(fields[3]),
      start: Number(fields[19]),
    })
  }
  return result
}

/** The start time of a process in clock ticks since boot (`/proc/<pid>/stat`), or undefined when gone or not Linux. */
export function processStart(pid: number): number | undefined {
  if (!canListProcesses) return
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'latin1')
    return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19])
  } catch {}
}

/**
 * Whether a process holds a descriptor open on `path` (also once the file
 * is deleted). Readable for our own processes only.
 */
export function holdsDescriptor(pid: number, path: string): boolean {
  let fds: string[]
  try {
    fds = readdirSync(`/proc/${pid}/fd`)
  } catch {
    return false
  }
  for (const fd of fds) {
    let target: string
    try {
      target = readlinkSync(`/proc/${pid}/fd/${fd}`)
    } catch {
      continue
    }
    if (target === path || target === path + ' (deleted)') return true
  }
  return false
}

/** Whether a process's environment holds `KEY=value` (readable for our own processes only). */
export function hasEnvironmentEntry(pid: number, entry: string): boolean {
  try {
    const environ = readFileSync(`/proc/${pid}/environ`, 'latin1')
    return environ.startsWith(entry + '\0') || environ.includes('\0' + entry + '\0')
  } catch {
    return false
  }
}

/** The command line of a process, arguments joined by spaces (`''` when gone). */
export function commandLineOf(pid: number): string {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'latin1').split('\0').filter(Boolean).join(' ')
  } catch {
    return ''
  }
}

/** A tree of processes started by one command: its shell and a marker in their environment. */
export interface ProcessFamily {
  /** Pid of the shell: leader of its own session and process group (node-pty calls setsid). */
  pid: number
  /** `KEY=value` put in the shell's environment and inherited by every child. */
  marker: string
  /**
   * Whether the shell has exited and been reaped. Its pid may then be
   * reused by an unrelated process, so its session and group are no longer
   * trusted: only the marker and the processes in `known` are.
   */
  exited: boolean
  /** Members seen earlier, pid → start time, so a reused pid is never mistaken for one. */
  known: Map<number, number>
  /**
   * A path unique to the run that the shell holds open on an inherited
   * descriptor, so every process it starts does too: a process that left
   * the session and cleared its environment still carries it, unless it
   * closes its inherited descriptors.
   */
  descriptor?: string
  /** When the shell started (clock ticks since boot): only later processes can carry the descriptor. */
  start?: number
}

/**
 * The live processes of a family: while the shell has not exited, its
 * session, its process group and its descendants; always, every process
 * carrying the marker in its environment (which catches children that
 * called `setsid` and were re-parented), the `known` members still alive
 * (same pid and start time, e.g. a child started under `env -i`), every
 * process started after the shell that holds the family's `descriptor`
 * (a child that left the session *and* cleared its environment, even
 * after the command ended), and their descendants. Zombies are left out:
 * they are already dead. Linux only; elsewhere `[]`.
 */
export function familyMembers(family: ProcessFamily, table = listProcesses()): ProcessInfo[] {
  const members = new Map<number, ProcessInfo>()
  const children = new Map<number, ProcessInfo[]>()
  for (const info of table) {
    if (!children.has(info.ppid)) children.set(info.ppid, [])
    children.get(info.ppid)!.push(info)
  }
  const add = (info: ProcessInfo) => {
    if (members.has(info.pid) || info.pid === process.pid) return
    members.set(info.pid, info)
    for (const child of children.get(info.pid) ?? []) add(child)
  }
  for (const info of table) {
    if (info.pid === process.pid) continue
    const inGroup = !family.exited && (info.pid === family.pid || info.sid === family.pid || info.pgid === family.pid)
    if (inGroup || family.known.get(info.pid) === info.start) add(info)
  }
  for (const info of table) {
    if (!members.has(info.pid) && info.pid !== process.pid && hasEnvironmentEntry(info.pid, family.marker)) add(info)
  }
  if (family.descriptor) {
    for (const info of table) {
      if (members.has(info.pid) || info.pid === process.pid || info.state === 'Z') continue
      if (family.start !== undefined && info.start < family.start) continue
      if (holdsDescriptor(info.pid, family.descriptor)) add(info)
    }
  }
  return [...members.values()].filter((info) => info.state !== 'Z' && info.state !== 'X')
}

function signal(target: number, name: NodeJS.Signals) {
  try {
    process.kill(target, name)
  } catch {}
}

/**
 * Kills a family with SIGKILL (issue "Built-in tools", item 5: "the whole
 * process group is killed: no orphan processes"): while the shell runs,
 * its process group at once; then every member {@link familyMembers}
 * finds, again until none is left (a process forking meanwhile is caught
 * by the next round), at most 10 rounds. Synchronous, so it can run while
 * the plugin is disposed. Returns the pids signalled besides the group.
 */
export function killFamily(family: ProcessFamily): number[] {
  if (!family.exited) signal(-family.pid, 'SIGKILL')
  const killed: number[] = []
  if (!canListProcesses) return killed
  for (let round = 0; round < 10; round++) {
    const members = familyMembers(family)
    if (!members.length) break
    for (const member of members) {
      signal(member.pid, 'SIGKILL')
      killed.push(member.pid)
    }
  }
  return killed
}
