// The words an approver answers an approval with. This module imports
// nothing, so the console page (client/) bundles it too: the chat commands,
// the permission service, the console listener and the page's buttons all
// read the same lists.

/**
 * Answer words (issue 3, item 7): `once` (this call), `turn` (this call and
 * the same action for the rest of the agent turn — like `once` when the
 * call has no `scope.turn`), `session` (the same action by the same user in
 * the same channel with the same agent, until the plugin restarts),
 * `always` (a permanent allow rule in the database); `reject` (refuse this
 * call), `never` (refuse it and store a permanent deny rule).
 */
export type ApprovalAnswer = 'once' | 'turn' | 'session' | 'always' | 'reject' | 'never'

/** The answers that let the call run (`tools.approve <id> [word]`, default `once`). */
export const approveWords: readonly ApprovalAnswer[] = ['once', 'turn', 'session', 'always']

/** The answers that refuse it (`tools.deny <id> [word]`, default `reject`). */
export const denyWords: readonly ApprovalAnswer[] = ['reject', 'never']

/** Every answer: the approving words, then the refusing ones. */
export const approvalAnswers: readonly ApprovalAnswer[] = [...approveWords, ...denyWords]

/** Whether `value` is one of {@link approvalAnswers}. */
export function isApprovalAnswer(value: unknown): value is ApprovalAnswer {
  return approvalAnswers.includes(value as ApprovalAnswer)
}
