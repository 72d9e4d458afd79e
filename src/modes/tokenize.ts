import porter2 from 'wink-porter2-stemmer'

/**
 * Text → search terms for the tool ranker (DESIGN.md "Modes": "the ranker
 * must handle Chinese and English text").
 *
 * - Identifiers are split first: `get_weather`, `getWeather`, `get-weather`,
 *   `HTTPServer`, `files.read`, `mcp__github__create_issue` all become words.
 * - Latin, Cyrillic, … runs: lower-cased (NFKC), English stop words dropped,
 *   then the Porter2 stemmer (`wink-porter2-stemmer`) so that "books",
 *   "booking" and "booked" meet "book".
 * - Han / kana / Hangul runs: the words of `Intl.Segmenter` (ICU's
 *   dictionary, two characters or more), every character bigram of the
 *   run, because the segmenter may cut a query and a description
 *   differently (it cuts "读取" into "读|取") and bigrams still meet, and
 *   every character as a low-weight unigram ({@link unigramPrefix}), so
 *   that "歌" meets "歌曲". Chinese function words (的, 了, 吗, 请, …) are
 *   dropped, and so are bigrams that span a particle ("的股").
 */

/** Common English words that say nothing about which tool is meant (incl. chat filler such as "please", "help"). */
export const englishStopWords = new Set(`a about above after again all also am an and any are as at be been before being below between both
but by can could did do does doing down during each few for from further get had has have having he her here hers him his how i if
in into is it its itself just let like me more most my need no nor not now of off on once only or other our ours out over own please
same she should so some such than that the their theirs them then there these they this those through to too under until up use
used using very via want was we were what when where which while who whom why will with would you your yours yourself help know
tell give show find make able some something thing things kindly hi hello thanks thank may might must shall lot`.split(/\s+/))

/** Chinese function words and chat filler, dropped from segmenter words (bigrams that contain them still count). */
const chineseStopWords = new Set(['的', '了', '是', '在', '和', '与', '及', '或', '把', '被', '给', '对', '从', '到', '吗', '呢', '吧', '啊',
  '呀', '请', '我', '你', '他', '她', '它', '我们', '你们', '一下', '帮', '帮我', '帮忙', '能', '可以', '一个', '这个', '那个', '什么', '怎么',
  '如何', '要', '想', '用', '使用', '工具', '有', '没有', '就', '也', '都', '还', '并', '等', '中', '里', '上', '下', '一', '个', '这', '那',
  '些', '么', '怎'])

const cjk = /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Hangul}]/u
/** Runs of CJK characters, or of other letters and digits. */
const runs = /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Hangul}]+|[\p{L}\p{N}\p{M}]+/gu

let segmenter: Intl.Segmenter | undefined
function cjkSegmenter() {
  return segmenter ??= new Intl.Segmenter('zh', { granularity: 'word' })
}

/**
 * Splits identifiers into words, keeping the letters' case for the camel-case
 * rule: `getHTTPResponse_v2` → `get HTTP Response v 2`. Separators
 * `_ - . / :` and any other punctuation become spaces.
 */
export function splitIdentifiers(text: string) {
  return text
    .replace(/([\p{Ll}\p{N}])(\p{Lu})/gu, '$1 $2')
    .replace(/(\p{Lu})(\p{Lu}\p{Ll})/gu, '$1 $2')
    .replace(/(\p{L})(\p{N})|(\p{N})(\p{L})/gu, (_, a, b, c, d) => a ? `${a} ${b}` : `${c} ${d}`)
}

/**
 * The Porter2 ("English") stem of a lower-case word; words with digits or
 * non-ASCII letters are kept as they are.
 */
export function stem(word: string) {
  return /^[a-z]{3,}$/.test(word) ? porter2(word) : word
}

/** Particles that glue words together; a bigram containing one spans two words. */
const particles = /[的吗呢吧啊呀]/

/**
 * Prefix of single-character terms. They let "歌" meet "歌曲" and "歌手",
 * but say less than words and bigrams, so the ranker weighs them less
 * (`RankerOptions.unigram`).
 */
export const unigramPrefix = '\u0001'

function pushCjk(run: string, out: string[]) {
  if (run.length > 1) {
    for (const { segment, isWordLike } of cjkSegmenter().segment(run)) {
      if (isWordLike && segment.length > 1 && !chineseStopWords.has(segment)) out.push(segment)
    }
    for (let i = 0; i + 1 < run.length; i++) {
      const bigram = run.slice(i, i + 2)
      if (!chineseStopWords.has(bigram) && !particles.test(bigram)) out.push(bigram)
    }
  }
  for (const char of run) {
    if (!chineseStopWords.has(char)) out.push(unigramPrefix + char)
  }
}

/**
 * The search terms of a text, in order, with repeats (term frequency
 * matters). Returns `[]` for text made only of stop words or punctuation.
 */
export function tokenize(text: string): string[] {
  const out: string[] = []
  if (!text) return out
  const words = splitIdentifiers(text.normalize('NFKC')).toLowerCase()
  for (const match of words.matchAll(runs)) {
    const run = match[0]
    if (cjk.test(run[0])) {
      pushCjk(run, out)
    } else if (!englishStopWords.has(run)) {
      out.push(stem(run))
    }
  }
  return out
}

/** Lower-case letters and digits of a name without separators: `PDF_Exporter` → `pdfexporter`. */
export function compactName(name: string) {
  return name.normalize('NFKC').toLowerCase().replace(/[^\p{L}\p{N}]+/gu, '')
}
