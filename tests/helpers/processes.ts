import { readdirSync, readFileSync } from 'fs'

/** Live (not zombie) processes whose command line contains `needle` (Linux `/proc`). */
export function processesWith(needle: string): number[] {
  const found: number[] = []
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue
    try {
      const state = readFileSync(`/proc/${name}/stat`, 'latin1')
      if (/^\S+ \(.*\) [ZX] /.test(state)) continue
      const command = readFileSync(`/proc/${name}/cmdline`, 'latin1').split('\0').join(' ')
      if (command.includes(needle)) found.push(Number(name))
    } catch {}
  }
  return found
}

/** A sleep duration unique to this test run, so its processes can be found. */
export const uniqueSleep = () => `${3000 + Math.floor(Math.random() * 5000)}.${process.pid}${Math.floor(Math.random() * 1000)}`
