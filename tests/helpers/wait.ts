import { AddressInfo, createServer } from 'net'

/** Waits `ms` ms. */
export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

/** Polls `check` every 20 ms until it returns a truthy value or `timeout` ms pass (then throws `what`). */
export async function waitFor<T>(check: () => T | Promise<T>, timeout = 5000, what = 'condition'): Promise<T> {
  const deadline = Date.now() + timeout
  while (true) {
    const value = await check()
    if (value) return value
    if (Date.now() > deadline) throw new Error(`timed out after ${timeout} ms waiting for ${what}`)
    await sleep(20)
  }
}

/** Whether `check` becomes true within `timeout` ms (polled every 20 ms), for `expect(…).to.equal(true)`. */
export function settles(check: () => boolean, timeout = 3000): Promise<boolean> {
  return waitFor(check, timeout).then(() => true, () => false)
}

/** A free TCP port on 127.0.0.1. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer()
    probe.once('error', reject)
    probe.listen(0, '127.0.0.1', () => {
      const { port } = probe.address() as AddressInfo
      probe.close(() => resolve(port))
    })
  })
}
