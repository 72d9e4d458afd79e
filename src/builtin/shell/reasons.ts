import type { ToolReasonText } from '../../types'

/** Parameters of a reason: names, options, paths as written (strings), counts and offsets (numbers). */
export type ReasonParams = Record<string, string | number>

const quote = (value: unknown) => JSON.stringify(String(value))

/**
 * Every reason the shell analysis can give, by stable code, with the
 * English sentence the model reads (issue "Built-in tools", item 6; the
 * chat texts are `chatluna-tools.shell.<code>` in both locale files, and
 * `tests/shell-reasons.spec.ts` checks each code has them). Parameters are
 * the raw values (a quoted name is quoted by the sentence, not stored
 * quoted), so a locale text can quote them its own way.
 */
export const shellReasons = {
  // Problems of the line as a whole.
  'analysis-failed': (p: ReasonParams) => `the command line could not be analysed: ${p.error}`,
  'nested-too-deep': (p: ReasonParams) => `command strings are nested more than ${p.depth} levels deep`,
  'parse-failed': (p: ReasonParams) => `the command line could not be parsed: ${p.error}`,
  'parse-error': (p: ReasonParams) => `the command line could not be parsed: ${p.error} (at character ${p.position})`,
  'prompt-expansion': () => 'the prompt expansion ${…@P} can run command substitutions stored in a variable',
  'reevaluated-substitution': (p: ReasonParams) => `${p.name} evaluates a string holding a command substitution`,
  'risky-variable': (p: ReasonParams) => `setting ${p.name} changes which code later commands run`,
  'substitution-in-variable': (p: ReasonParams) => `the variable ${p.name} holds a command substitution as text, which arithmetic or prompt expansion could run`,
  'arithmetic-variable': (p: ReasonParams) => `arithmetic evaluates the variable ${p.name}, whose value is only known at run time and could hold a command substitution`,
  'arithmetic-positional': (p: ReasonParams) => `arithmetic evaluates the positional parameter ${p.name}, whose value is only known at run time and could hold a command substitution`,

  // One command: its name and the wrappers around it.
  'dynamic-name': (p: ReasonParams) => `the command name ${quote(p.name)} is built at run time`,
  'empty-name': () => 'the command name is empty',
  'program-path': (p: ReasonParams) => `${quote(p.path)} runs a program by a path outside the system directories, which cannot be judged by its name`,
  'command-variable': (p: ReasonParams) => `setting ${p.name} changes which code the command runs`,
  'interactive-shell': (p: ReasonParams) => `${p.name} without a command opens an interactive shell`,
  'dynamic-command-string': (p: ReasonParams) => `the command string of ${p.label} is built at run time`,
  'wrapper-program': (p: ReasonParams) => `${p.name} ${p.option} runs the program ${quote(p.program)}, which cannot be checked`,
  'unknown-option': (p: ReasonParams) => `the option ${p.option} of ${p.name} is not known to the analysis, so the command it runs cannot be found`,
  'wrapper-dynamic-argument': (p: ReasonParams) => `an argument of ${p.name} is built at run time, so the command it runs cannot be known`,

  // Programs that run code of their own.
  'shell-startup-file': (p: ReasonParams) => `${p.name} ${p.option} runs the code of a file`,
  'shell-command-string': (p: ReasonParams) => `${p.name} -c runs a command string in a new shell`,
  'shell-script-file': (p: ReasonParams) => `${p.name} runs the script file ${quote(p.file)}, whose commands cannot be checked`,
  'shell-stdin': (p: ReasonParams) => `${p.name} runs commands from its standard input, which cannot be checked`,
  'interpreter-code': (p: ReasonParams) => `${p.name} runs program code (inline, from a file or from standard input), which cannot be checked`,
  'eval': () => 'eval runs a string as shell code',
  'source': (p: ReasonParams) => `${p.name} runs the commands of a file in this shell`,
  'dynamic-argument': (p: ReasonParams) => `an argument of ${p.name} is built at run time`,
  'su-shell': () => 'su without -c opens a shell as another user',
  'awk-file': (p: ReasonParams) => `${p.name} ${p.option} runs awk code from a file`,
  'awk-dynamic-program': (p: ReasonParams) => `the ${p.name} program is built at run time`,
  'awk-runs-commands': (p: ReasonParams) => `the ${p.name} program runs commands (system() or a pipe)`,
  'sed-file': (p: ReasonParams) => `${p.name} -f runs a sed script from a file`,
  'sed-dynamic-script': (p: ReasonParams) => `the ${p.name} script is built at run time`,
  'sed-runs-commands': (p: ReasonParams) => `the ${p.name} script runs commands (the e command or the e flag)`,
  'find-delete': () => 'find -delete removes every file it matches, which cannot be checked in advance',
  'find-unterminated': (p: ReasonParams) => `find ${p.option} has no terminating ";" or "+"`,
  'find-dynamic-command': () => 'the command of find -exec is built at run time',
  'watch-exec': () => 'watch -x runs its command in a way that cannot be checked',
  'parallel': () => 'parallel runs its input as shell commands',
  'alias': () => 'alias defines a command that runs other code',
  'hash-path': () => 'hash -p makes a command name run another program',
  'enable-file': () => 'enable -f loads code into the shell',
  'fc': () => 'fc runs commands from the shell history',
  'array-callback': (p: ReasonParams) => `${p.name} -C runs a callback`,

  // Programs that run commands named in their options (escapes.ts).
  'escape-dynamic-argument': (p: ReasonParams) => `an argument of ${p.name} is built at run time, and ${p.name} can run commands named in its options`,
  'git-exec-path': () => 'git --exec-path makes git run its commands from another directory',
  'git-config-option': () => 'git -c sets an option whose value is a command',
  'git-config-command': () => 'git config sets an option whose value is a command',
  'git-rebase-exec': () => 'git rebase --exec runs a command after each commit',
  'git-difftool-command': () => 'git difftool --extcmd runs a command',
  'git-bisect-run': () => 'git bisect run runs a command',
  'git-submodule-foreach': () => 'git submodule foreach runs a command in each submodule',
  'git-filter-branch': () => 'git filter-branch runs its filters as commands',
  'git-transport-program': () => 'git runs the program given as --upload-pack, --receive-pack or --exec',
  'git-grep-pager': () => 'git grep -O runs a pager command',
  'man-pager': () => 'man runs the pager or browser command given in its options',
  'ed': () => 'ed runs the editing commands of its input, and ! among them runs shell commands',
  'dc': () => 'dc runs the program of its input or -e, and ! in it runs shell commands',
  'm4': () => 'm4 runs syscmd and esyscmd of its input as shell commands',
  'terminal-session': (p: ReasonParams) => `${p.name} runs commands in a terminal session outside this command`,
  'sg': () => 'sg runs a command string as another group',
  'runcon': () => 'runcon runs a command in another security context',
  'bwrap': () => 'bwrap runs a command in a sandbox set up by options the analysis does not read',
  'entr': () => 'entr runs a command each time a file changes',
  'perf': () => 'perf runs the command it measures',
  'package-command': (p: ReasonParams) => `${p.command} runs a command of a package, which it may download first`,
  'container': () => 'docker runs commands in a container, which can reach the host',
  'apt-option': () => 'apt runs a command given in its -o options',
  'option-command': (p: ReasonParams) => `${p.name} runs a command given in its options`,
  'ssh-command': () => 'ssh -o runs a local command',
  'scp-program': () => 'scp -S runs another program',
  'editor-command': () => 'the editor runs commands given in its options',
  'gdb-command': () => 'gdb runs commands given in its options',
  'compgen-command': () => 'compgen -C/-F runs a command',
  'runs-later': (p: ReasonParams) => `${p.name} runs commands from its input later`,
  'crontab': () => 'crontab installs commands that run later',
  'run-parts': () => 'run-parts runs every script in a directory',
  'systemd-run': () => 'systemd-run starts a command outside this shell',
  'nsenter': () => 'nsenter runs a command in other namespaces',
  'unshare': () => 'unshare runs a command in new namespaces',
  'runuser': () => 'runuser runs a command as another user',
  'socat-command': () => 'socat runs a command given in its addresses',
  'nc-command': () => 'nc runs a command for each connection',

  // The bash tool's rules (rules.ts) and the workspace heuristic (workspace.ts).
  'deny-list': (p: ReasonParams) => `"${p.name}" is on the deny list (rule "${p.rule}")`,
  'deny-rule': (p: ReasonParams) => `"${p.command}" matches the deny rule "${p.rule}"`,
  'not-allowed': (p: ReasonParams) => `"${p.name}" is not on the allow list (the bash tool is in allow mode)`,
  'deny-rule-unchecked': (p: ReasonParams) => `some arguments of "${p.name}" are only known at run time, so the deny rule "${p.rule}" cannot be checked`,
  'outside-workspace': (p: ReasonParams) => `"${p.command}" reaches outside the workspace (${p.paths}), so it counts as dangerous`,
}

/** A stable code of the shell analysis' reasons. */
export type ShellReasonCode = keyof typeof shellReasons

/** Every code, for the locale check. */
export const shellReasonCodes = Object.keys(shellReasons) as ShellReasonCode[]

/**
 * Why the analysis asks or refuses: a stable `code`, its `params`, and
 * `text`, the English sentence for the model ({@link shellReasons}).
 */
export interface ShellReason {
  code: ShellReasonCode
  params: ReasonParams
  text: string
}

/** A reason with its English sentence. */
export function shellReason(code: ShellReasonCode, params: ReasonParams = {}): ShellReason {
  return { code, params, text: shellReasons[code](params) }
}

/** Where the chat texts of the shell reasons live in the locale files. */
export const shellTextPrefix = 'chatluna-tools.shell.'

/** A reason as a locale text for {@link ToolAction.reasonText}: `chatluna-tools.shell.<code>` with its params. */
export function reasonText(reason: ShellReason): ToolReasonText {
  return { path: shellTextPrefix + reason.code, params: reason.params }
}
