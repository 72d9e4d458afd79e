import { cpSync, existsSync, mkdirSync, readdirSync, rmSync, statSync, writeFileSync, readFileSync } from 'fs'
import { dirname, join, relative, resolve } from 'path'
import { spawnSync } from 'child_process'
import { transformSync } from 'esbuild'

// The console serves a plugin's built page only from a folder inside
// `node_modules` (production mode), so the browser test loads this plugin the
// way the marketplace installs it: package.json, lib (compiled), dist (the
// built page) and locales, copied into a `node_modules` folder.

export const root = resolve(__dirname, '../..')

/** The newest modification time of a file, or of any file under a folder. */
function newest(path: string): number {
  const stats = statSync(path)
  if (!stats.isDirectory()) return stats.mtimeMs
  let time = 0
  for (const name of readdirSync(path)) time = Math.max(time, newest(join(path, name)))
  return time
}

/** What the page is built from: `client/` and the modules of `src/` it bundles. */
export const clientSources = ['client', 'src/permission/answers.ts']

/**
 * Builds `dist/` with `koishi-console build` when it is missing or older
 * than any of {@link clientSources} (a few seconds; skipped when fresh).
 */
export function ensureClientBuild() {
  const output = join(root, 'dist/index.js')
  const sources = Math.max(...clientSources.map((source) => newest(join(root, source))))
  if (existsSync(output) && statSync(output).mtimeMs >= sources) return false
  const bin = join(dirname(require.resolve('@koishijs/client/package.json', { paths: [root] })), 'bin.js')
  const result = spawnSync(process.execPath, [bin, 'build'], { cwd: root, encoding: 'utf8' })
  if (result.status !== 0) throw new Error(`koishi-console build failed:\n${result.stdout}\n${result.stderr}`)
  return true
}

function compile(source: string, target: string) {
  for (const name of readdirSync(source)) {
    const path = join(source, name)
    if (statSync(path).isDirectory()) {
      compile(path, join(target, name))
    } else if (name.endsWith('.ts') && !name.endsWith('.d.ts')) {
      const { code } = transformSync(readFileSync(path, 'utf8'), {
        loader: 'ts',
        format: 'cjs',
        platform: 'node',
        target: 'node18',
        sourcefile: relative(root, path),
      })
      mkdirSync(target, { recursive: true })
      writeFileSync(join(target, name.replace(/\.ts$/, '.js')), code)
    }
  }
}

/**
 * Installs the current sources as `<folder>/node_modules/<name>` (lib
 * compiled file by file with esbuild, as tsc would lay it out) and returns
 * the package folder. `folder` must lie inside the repository so that the
 * plugin's own imports resolve to the repository's `node_modules`.
 */
export function stagePackage(folder: string) {
  ensureClientBuild()
  const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'))
  const target = join(folder, 'node_modules', pkg.name)
  rmSync(target, { recursive: true, force: true })
  mkdirSync(target, { recursive: true })
  cpSync(join(root, 'package.json'), join(target, 'package.json'))
  cpSync(join(root, 'locales'), join(target, 'locales'), { recursive: true })
  cpSync(join(root, 'dist'), join(target, 'dist'), { recursive: true })
  compile(join(root, 'src'), join(target, 'lib'))
  return target
}
