/*
 * The last line of defence against orphaned MCP server processes (issue
 * "MCP", item 5: "leaves no child process behind"). A connection closes its
 * process through the SDK (stdin closed, then SIGTERM, then SIGKILL, 2 s
 * apart), but cordis does not wait for asynchronous disposers: when Koishi
 * exits right after stopping, a process that ignores the end of its stdin
 * would outlive it. Every live stdio server is listed here, and the list is
 * killed when this Node.js process exits.
 */

const live = new Set<number>()
let installed = false

function killAll() {
  for (const pid of live) {
    try {
      process.kill(pid, 'SIGKILL')
    } catch {}
  }
  live.clear()
}

/** Lists a spawned server process; call the returned function when it has exited. */
export function trackProcess(pid: number): () => void {
  live.add(pid)
  if (!installed) {
    installed = true
    process.once('exit', killAll)
  }
  return () => {
    live.delete(pid)
  }
}
