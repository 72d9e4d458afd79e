import { expect } from 'chai'
import { readFileSync } from 'fs'
import { mkdir, writeFile } from 'fs/promises'
import { join, resolve } from 'path'
import { load } from 'js-yaml'
import { Dict } from 'koishi'
import { shellReasonCodes, shellReasons, shellTextPrefix } from '../src/builtin/shell/reasons'
import { commandParts, compileRules } from '../src/builtin/shell/rules'
import { leavesWorkspace, normalizeWorkspace } from '../src/builtin/shell/workspace'
import { defaultDeny, defaultDenyArgs } from '../src/builtin/config'
import { sayReason } from '../src/permission/texts'
import { ToolAction } from '../src'
import { createApp, TestApp } from './helpers/app'
import { callText, nextApproval } from './helpers/permissions'
import { chmodBypasses } from './fixtures/shell-inputs'

// The shell analysis' reasons in the user's language (zh-CN newcomer report:
// a denied bash call mixed a Chinese reply with the analysis' English reason),
// and the workspace heuristic (`cat ../koishi.yml` asked with risk "none").

const locales = Object.fromEntries(['zh-CN', 'en-US'].map((locale) => [locale, load(readFileSync(resolve(__dirname, `../locales/${locale}.yml`), 'utf8')) as Dict]))
const shellTexts = (locale: string): Dict<string> => locales[locale]['chatluna-tools'].shell
/** The Latin words the zh-CN shell texts use on their own (program names, options, "shell"), placeholders aside. */
const zhTerms = Object.values(shellTexts('zh-CN')).join(' ').replace(/\{\w+\}/g, ' ')
const placeholders = (text: string) => [...text.matchAll(/\{(\w+)\}/g)].map((match) => match[1]).sort()

const defaults = compileRules({ mode: 'deny', allow: [], deny: defaultDeny, denyArgs: defaultDenyArgs })
const allowMode = compileRules({ mode: 'allow', allow: ['ls'], deny: [], denyArgs: [] })
const workDir = '/srv/bot/workspace'
const workspace = normalizeWorkspace(workDir, ['/srv/bot/shared', '/srv/bot/data/chatluna-tools/outputs'])

/** Lines that produce every kind of reason (asks, refusals, problems of the line, outside paths). */
const corpus = [
  'echo "unterminated', '$CMD x', '""', './build.sh', 'PATH=.:$PATH ls', 'env BASH_ENV=x ls', 'sudo -s', 'bash -c "$X"',
  'env --dbus x ls', 'dbus-run-session --dbus-daemon=x ls', 'env $X ls', 'bash --rcfile x', `sh -c 'ls'`, 'bash x.sh', 'bash',
  'python3 -c 1', 'eval ls', 'source x', 'su $X', 'su', 'awk -f x', 'awk $P', `awk 'BEGIN { system("x") }'`, 'sed -f x',
  'sed $S f', `sed 's/a/b/e' f`, 'find . -delete', 'find . -exec ls', 'find . -executable $X', 'watch -x ls', 'parallel ls',
  'alias a=b', 'hash -p /x ls', 'enable -f x y', 'fc', 'mapfile -C f', `let 'a[$(id)]=1'`, `[[ -v 'a[$(id)]' ]]`,
  `x='a[$(id)]'`, 'echo ${x@P}', 'read x; echo $((x))', 'set -- $X; echo $(($1))', 'git $X', 'git --exec-path=/x',
  'git -c alias.x=y x', 'git config alias.x y', 'git rebase -x ls', 'git difftool -x ls', 'git bisect run ls',
  'git submodule foreach ls', 'git filter-branch x', 'git clone --upload-pack=x y', 'git grep -O x', 'man -P x ls', 'ed f',
  'dc', 'm4', 'tmux', 'screen', 'sg g ls', 'runcon x ls', 'bwrap ls', 'entr ls', 'perf stat ls', 'npx x', 'bunx x', 'npm exec x',
  'docker run x', 'apt -o APT::Update::Pre-Invoke::=x update', 'tar -I x -cf a .', 'rsync -e x a b', 'zip -TT x a b',
  'ssh -o ProxyCommand=x h', 'scp -S x a b', 'vim -c x', 'gdb -ex x', 'compgen -C x', 'at now', 'batch', 'crontab x',
  'run-parts x', 'systemd-run ls', 'nsenter ls', 'unshare ls', 'runuser ls', 'socat exec:x -', 'nc -e x h', 'shutdown',
  'rm -rf x', 'rm $X', 'cat ../x', 'awk -e "$P" f', `${'eval '.repeat(10)}ls`,
]

describe('shell analysis reasons in the user\'s language', () => {
  it('every reason code has a text in both locale files, and the locale files no others', () => {
    for (const locale of ['zh-CN', 'en-US']) {
      const texts = shellTexts(locale)
      const missing = shellReasonCodes.filter((code) => typeof texts[code] !== 'string' || !texts[code].trim())
      expect(missing, `${locale} lacks chatluna-tools.shell.<code>`).to.deep.equal([])
      expect(Object.keys(texts).filter((code) => !(code in shellReasons)), `${locale} has texts of no reason`).to.deep.equal([])
    }
    expect(shellReasonCodes.length).to.be.greaterThan(80)
  })

  it('each locale text fills only parameters its reason gives', () => {
    // Render each English sentence with marker values: a placeholder the sentence does not use is a parameter it does not give.
    for (const code of shellReasonCodes) {
      const given = placeholders(shellTexts('en-US')[code])
      const marked = Object.fromEntries(given.map((name) => [name, `<${name}>`]))
      const sentence = shellReasons[code](marked)
      for (const name of given) expect(sentence, `${code}: {${name}}`).to.contain(`<${name}>`)
      expect(placeholders(shellTexts('zh-CN')[code]).every((name) => given.includes(name)), code).to.equal(true)
    }
  })

  it('the corpus reaches every reason code, and each part carries its reasons as locale texts', () => {
    const seen = new Set<string>()
    const lines = [...corpus, ...chmodBypasses.map(([line]) => line)]
    const parts = lines.flatMap((line) => commandParts(line, defaults, { workspace }).map((part) => [line, part] as const))
    parts.push(['cat x', commandParts('cat x', allowMode)[0]])
    for (const [line, part] of parts) {
      {
        if (!part.reason) continue
        expect(part.reasonText, `${line}: ${part.reason}`).to.be.an('array').that.is.not.empty
        for (const text of part.reasonText) {
          expect(text.path.startsWith('chatluna-tools.shell.'), text.path).to.equal(true)
          seen.add(text.path.slice(shellTextPrefix.length))
        }
        // The English sentence for the model is made of the same reasons.
        const english = part.reasonText.map((text) => shellReasons[text.path.slice(shellTextPrefix.length) as keyof typeof shellReasons](text.params)).join('; ')
        expect(part.reason.startsWith(english), part.reason).to.equal(true)
      }
    }
    const unreached = shellReasonCodes.filter((code) => !seen.has(code))
    // Reasons only a failure of the parser itself gives (a stack overflow, a thrown parse).
    expect(unreached.filter((code) => !['analysis-failed', 'parse-failed'].includes(code))).to.deep.equal([])
  })

  describe('rendered by the permission texts', () => {
    let test: TestApp
    before(async () => (test = await createApp({}, { locale: 'zh-CN' })))
    after(() => test.dispose())

    it('says every reason of the corpus in zh-CN without English sentences, and in en-US without Chinese', () => {
      for (const line of corpus) {
        for (const part of commandParts(line, defaults, { workspace })) {
          if (!part.reasonText) continue
          const zh = sayReason(test.app, ['zh-CN'], part.reasonText, 'FALLBACK')
          const en = sayReason(test.app, ['en-US'], part.reasonText, 'FALLBACK')
          expect(zh, line).not.to.equal('FALLBACK')
          expect(en, line).not.to.equal('FALLBACK')
          expect(zh, line).to.match(/[\u4e00-\u9fff]/)
          // Apart from the words the command itself brings (names, options, paths) and the technical terms of the
          // zh-CN texts themselves (program names, options, "shell"), no English words: no English sentence slipped in.
          const params = part.reasonText.flatMap((text) => Object.values(text.params ?? {})).join(' ')
          const allowed = new Set(`${line} ${part.target} ${params} ${zhTerms}`.match(/[A-Za-z]+/g))
          const english = (zh.match(/[A-Za-z]+/g) ?? []).filter((word) => !allowed.has(word))
          expect(english, `${line} → ${zh}`).to.deep.equal([])
          expect(en, line).not.to.match(/[\u4e00-\u9fff]/)
        }
      }
    })

    it('falls back to the English reason when a text is missing', () => {
      expect(sayReason(test.app, ['zh-CN'], [{ path: 'chatluna-tools.shell.no-such-code' }], 'the English reason')).to.equal('the English reason')
      expect(sayReason(test.app, ['zh-CN'], undefined, 'the English reason')).to.equal('the English reason')
    })

    it('shows a model-written command on one line inside the reason', () => {
      const [part] = commandParts('rm -rf "x\ny"', defaults)
      expect(sayReason(test.app, ['en-US'], part.reasonText)).to.equal('"rm -rf "x\\ny"" matches the deny rule "rm -rf".')
    })
  })
})

describe('the workspace heuristic of the bash tool', () => {
  const flagged = (line: string, extra: ToolAction[] = commandParts(line, defaults, { workspace })) =>
    extra.filter((part) => part.risk === 'dangerous').map((part) => part.name)

  for (const [line, expected] of [
    ['cat ../x', ['exec:cat']],
    ['cat /etc/passwd', ['exec:cat']],
    ['ls ~', ['exec:ls']],
    ['ls ~/notes', ['exec:ls']],
    ['cat sub/../x', []],
    ['cat ./x', []],
    ['grep -r foo .', []],
    ['cp a /tmp/b', ['exec:cp']],
    ['cat sub/../../x', ['exec:cat']],
    ['cd .. && ls', ['exec:cd']],
    ['cat ../*.txt', ['exec:cat']],
    ['cat /etc/*', ['exec:cat']],
    [`cat "$HOME/x"`, []],
    ['echo hi > ../out.txt', ['exec:echo']],
    ['sort < /etc/shadow', ['exec:sort']],
    ['{ ls; pwd; } > /tmp/list', ['exec:ls', 'exec:pwd']],
    ['echo hi 2>&1 >/dev/null', []],
    ['dd if=/etc/passwd of=copy', ['exec:dd']],
    ['tool --config=../secret.yml', ['exec:tool']],
    ['tool --verbose -n 5', []],
    [`cat ${workDir}/notes.txt /srv/bot/shared/a /srv/bot/data/chatluna-tools/outputs/x.log`, []],
    [`cat ${workDir}-evil/x`, ['exec:cat']],
    ['git log HEAD~1..HEAD', []],
    [`bash -c 'cat ../x'`, ['exec:cat']],
    ['find . -name "*.log" -exec cp {} /tmp \\;', ['exec:find', 'exec:cp']],
  ] as [string, string[]][]) {
    it(`${expected.length ? 'flags' : 'does not flag'} ${JSON.stringify(line)}`, () => {
      expect(flagged(line)).to.deep.equal(expected)
    })
  }

  it('says which paths leave the workspace, keeps refusals and critical risks as they are, and needs a workspace', () => {
    const [cat] = commandParts('cat ../koishi.yml /etc/hosts', defaults, { workspace })
    expect(cat).to.deep.equal({
      name: 'exec:cat',
      target: 'cat ../koishi.yml /etc/hosts',
      risk: 'dangerous',
      reason: '"cat ../koishi.yml /etc/hosts" reaches outside the workspace ("../koishi.yml", "/etc/hosts"), so it counts as dangerous',
      reasonText: [{ path: 'chatluna-tools.shell.outside-workspace', params: { command: 'cat ../koishi.yml /etc/hosts', paths: '"../koishi.yml", "/etc/hosts"' } }],
    })
    const [python] = commandParts('python3 ../x.py', defaults, { workspace })
    expect(python).to.include({ verdict: 'ask', risk: 'dangerous' })
    expect(python.reason).to.equal('"python3 ../x.py" reaches outside the workspace ("../x.py"), so it counts as dangerous; python3 runs program code (inline, from a file or from standard input), which cannot be checked: a human must approve')
    expect(commandParts('rm -rf ../x', defaults, { workspace })[0]).to.deep.include({ verdict: 'deny', reason: '"rm -rf ../x" matches the deny rule "rm -rf"' })
    expect(commandParts('rm -rf ../x', defaults, { workspace })[0]).not.to.have.property('risk')
    expect(commandParts('sudo cat /etc/shadow', defaults, { workspace }).map((part) => part.risk)).to.deep.equal(['critical', 'critical'])
    expect(commandParts('cat ../x', defaults)[0]).not.to.have.property('risk')
  })

  it('judges single words', () => {
    for (const word of ['..', '../', '~', '~root', '/', '//etc', `${workDir}/../x`, '--file=~/x', 'of=/dev/sda']) {
      expect(leavesWorkspace(word, workspace), word).to.equal(true)
    }
    for (const word of ['.', 'a/..', 'x..y', '...', `${workDir}`, `${workDir}/`, '/dev/null', '/dev/fd/3', '-rf', '--', 'a=b', 's/../x/', '']) {
      expect(leavesWorkspace(word, workspace), word).to.equal(false)
    }
  })
})

for (const locale of ['zh-CN', 'en-US'] as const) {
  const en = locale === 'en-US'
  const chinese = /[\u4e00-\u9fff]/
  /** English words of sentences that must not appear in a zh-CN reply (the command aside). */
  const englishWords = /\b(the|is|are|runs|must|human|matches|rule|outside|workspace|dangerous|counts|string|code|tool|wants|confirm)\b/

  describe(`bash refusals and approvals in chat (${locale})`, function () {
    this.timeout(10000)
    let test: TestApp
    beforeEach(async () => {
      test = await createApp({ workDir: 'workspace', bash: { timeout: 3000 } }, { database: true, locale })
      await mkdir(join(test.baseDir, 'workspace'), { recursive: true })
      await writeFile(join(test.baseDir, 'workspace/x.txt'), 'x')
      await test.app.mock.initUser('owner', 5)
      await test.app.mock.initUser('mod', 4)
      await test.app.mock.initUser('admin', 3)
    })
    afterEach(() => test.dispose())
    const client = (user: string) => test.app.mock.client(user, 'group')
    const withoutCommand = (text: string, command: string) => text.split(command).join('')

    it('a denied bash call replies entirely in the user\'s language', async () => {
      const command = 'rm -rf x.txt'
      const replies = await client('owner').receive(callText('bash', { command }))
      expect(replies).to.deep.equal([en
        ? '[denied] The tool refuses "exec:rm". "rm -rf x.txt" matches the deny rule "rm -rf".'
        : '[已拒绝] 工具拒绝执行 "exec:rm"。"rm -rf x.txt" 匹配拒绝规则 "rm -rf"。'])
      const rest = withoutCommand(replies[0], command)
      if (en) expect(rest).not.to.match(chinese)
      else expect(rest).not.to.match(englishWords)
      // The model still reads the English reason.
      const result = await test.app.tools.call({ name: 'bash', args: { command }, scope: { authority: 5 } })
      expect(result.error.message).to.equal('The call was not allowed: "rm -rf x.txt" matches the deny rule "rm -rf".')
    })

    it('a command the analysis cannot judge asks in the user\'s language, and the refusal replies in it too', async () => {
      const command = 'eval "ls"'
      const asked = nextApproval(test.app)
      const replies = client('mod').receive(callText('bash', { command }))
      const { id } = await asked
      await client('admin').receive(`tools.deny ${id}`)
      const [prompt, result] = await replies
      expect(prompt).to.equal(en ? [
        `Approval needed #${id}: mod (authority 4) wants to run the tool bash.`,
        'Action: exec:eval, exec:ls',
        'Target: eval "ls"',
        'Parts: eval "ls" (asks) · ls (asks)',
        'Risk: none',
        'Why: The tool wants a person to confirm "exec:eval". eval runs a string as shell code.',
        `Approve: tools.approve ${id} [once|turn|session|always] · refuse: tools.deny ${id} [reject|never] · expires in 120 s.`,
      ].join('\n') : [
        `需要审批 #${id}：mod（权限等级 4）想要运行工具 bash。`,
        '动作：exec:eval, exec:ls',
        '目标：eval "ls"',
        '各部分：eval "ls"（需审批） · ls（需审批）',
        '风险：无',
        '原因：工具要求由人确认 "exec:eval"。eval 会把字符串当作 shell 代码运行。',
        `批准：tools.approve ${id} [once|turn|session|always] · 拒绝：tools.deny ${id} [reject|never] · 120 秒后过期。`,
      ].join('\n'))
      expect(result).to.equal(en ? `[denied] admin refused approval #${id}.` : `[已拒绝] admin 拒绝了审批 #${id}。`)
      for (const text of [prompt, result]) {
        const rest = withoutCommand(text, command)
        if (en) expect(rest).not.to.match(chinese)
        else expect(rest).not.to.match(englishWords)
      }
    })

    it('report: "cat ../koishi.yml" asks with risk dangerous and says it reaches outside the workspace', async () => {
      await writeFile(join(test.baseDir, 'koishi.yml'), 'secret: 1\n')
      const command = 'cat ../koishi.yml'
      const asked = nextApproval(test.app)
      const replies = client('mod').receive(callText('bash', { command }))
      const approval = await asked
      expect(approval.risk).to.equal('dangerous')
      await client('admin').receive(`tools.deny ${approval.id}`)
      const [prompt] = await replies
      const lines = prompt.split('\n')
      expect(lines.slice(3, 5)).to.deep.equal(en ? [
        'Risk: dangerous',
        'Why: The permission mode auto asks before exec actions. "cat ../koishi.yml" reaches outside the workspace ("../koishi.yml"), so it counts as dangerous.',
      ] : [
        '风险：危险',
        '原因：权限模式 auto 在执行类动作前需要审批。"cat ../koishi.yml" 访问了工作区之外的路径（"../koishi.yml"），因此视为危险。',
      ])
      const rest = withoutCommand(prompt, command)
      if (en) expect(rest).not.to.match(chinese)
      else expect(rest).not.to.match(englishWords)
    })

    it('report: a compound line asks with the whole line and every part, and tools.pending lists the whole line', async () => {
      await test.app.tools.permissions.rules.add({ effect: 'allow', action: 'exec:ls' })
      const command = 'ls | head -n 2 && touch made-by-bash.txt'
      const asked = nextApproval(test.app)
      const replies = client('mod').receive(callText('bash', { command }))
      const { id } = await asked
      const [pending] = await client('admin').receive('tools.pending')
      expect(pending.split('\n')[1]).to.match(new RegExp(`^#${id} · bash · exec:head, exec:touch ls \\| head -n 2 && touch made-by-bash\\.txt · `))
      await client('admin').receive(`tools.approve ${id}`)
      const [prompt, result] = await replies
      expect(prompt.split('\n').slice(1, 4)).to.deep.equal(en ? [
        'Action: exec:head, exec:touch',
        `Target: ${command}`,
        'Parts: ls (allowed) · head -n 2 (asks) · touch made-by-bash.txt (asks)',
      ] : [
        '动作：exec:head, exec:touch',
        `目标：${command}`,
        '各部分：ls（允许） · head -n 2（需审批） · touch made-by-bash.txt（需审批）',
      ])
      expect(result).to.match(/\[exit code 0/)
      expect(readFileSync(join(test.baseDir, 'workspace/made-by-bash.txt'), 'utf8')).to.equal('')
    })

    it('a command inside the workspace keeps risk none', async () => {
      await mkdir(join(test.baseDir, 'workspace/sub'))
      const asked = nextApproval(test.app)
      const replies = client('mod').receive(callText('bash', { command: 'cat sub/../x.txt' }))
      const approval = await asked
      await client('admin').receive(`tools.approve ${approval.id}`)
      expect(approval.risk).to.equal(undefined)
      const [prompt, result] = await replies
      expect(prompt).to.contain(en ? 'Risk: none' : '风险：无')
      expect(result).to.match(/^x\n\n\[exit code 0/)
    })
  })
}
