/**
 * The working state of one extractive fold: the user's asks and rules, each
 * step's statements classified and the best kept, each tool call's exact
 * outcome (failures with their error, commands applied, commits), and the
 * Current state they make at the end.
 */
import { leadInOf, renderedEdits, touchesInStep } from './artifacts';
import { CONTENT_CLASSES, classifySentence, isFragment, sentencesOf, SUSPECTED_LEAD, type Sentence, type SentenceClass } from './classify';
import { splitThoughts, thoughtsSaidAgain } from './thoughts';
import { CommandHistory, failedLinkNote, REPRODUCED, settingOf } from './commandHistory';
import { consoleEvents } from './consoleEvents';
import { Deliverables } from './deliverables';
import { ASKS_USER_FOR, CONCLUDES, HEDGE as HEDGED, isGreeting, VAGUE_CHOICE } from './cues';
import { clipChars, handles, salience, saysNothing, sharedWords, statementOf, stems, subjectKey, withSubject, words } from './digest';
import { addStatement, askOf, discardWork, disputeClaims, progressReport, resumedWork, stoppedWork, failedAgain, FAILED_LINE, REPLACED_TAIL, RESOLVED, repeatedObjection, sourceJustBefore } from './factLines';
import { contentHash } from './hash';
import { cursorToolErrors, editFailureReport, splitUserText, withoutInjectedBlocks } from './harness';
import { continued, listed, LISTED_ITEM_WORDS, LISTED_LINE_WORDS, lowerFirst, withIntro, withReferent } from './sentenceReading';
import { awaitedChoice, choiceText, dialogDecisions, lastQuestion } from './shortReplies';
import { CONTINUED_SUFFIX, mergeSources, UNANSWERED_STATUS, type FactLine, type FactSection, type SummaryBuilder, type SummaryState } from './summary';
import { errorLine, errorSignatures } from './terminalOutput';
import { answerPlan, layPlan } from './planLists';
import { currentPlan, PLAN_NEXT, planLine, planNext, todoPlanOf, type TodoPlan } from './todoPlan';
import { absence, changeNotApplied, commandCore, commandLabel, commandReportsError, commitOf, CONFIGURING_COMMAND, firstLine, INFORMATIONAL_EXIT, installedOutcome, lookLabel, observation, outputNotice, quotedSnippet, raisedAt, showsItWorked, testSummary, TOOL_PROTOCOL_ERROR, toolDescription, toolLabel, UNDOING_COMMAND, userRejection } from './toolResults';
import { classifyTool, commandStatus, exitCode, onlyTidies, shellCommand, shellRemovals, madeInStep, type FileTouch } from './tools';
import type { ToolInvocation, Unit } from './types';
import { fetchedRules } from './workspaceRules';
import { dropLiftedRules, extractConstraints, goalText, liftsReadOnly, offerOf, onlyRules, resolvedRequest, topicKey } from './userWords';

/** Lines one step may contribute per class (a turn's closing report no more: it mostly restates what the steps found). */
const PER_STEP: Partial<Record<SentenceClass, number>> = { finding: 5, decision: 4, failure: 3, change: 2 };
/** A statement must carry at least this much to be kept (see digest.salience). */
const MIN_SALIENCE: Partial<Record<SentenceClass, number>> = { finding: 1, decision: 0, failure: 0, change: 1 };
/** Current state once the agent answered the last ask and nothing is planned: said only of the span that ends so. */
const WAITING_NEXT = "wait for the user's next request";
/** What a failure says of its cause when the command printed nothing but its exit code. */
const SILENT_FAILURE = 'no output';
/** What Current state quotes of the last command's output (its counts, its answer, its warning). */
const STATUS_OUTPUT_CHARS = 160;
/** How a next step the agent stated itself is marked. */
const STATED_NEXT = ' (stated by the agent)';
/** What Next adds when every item of the agent's todo plan is done. */
const PLAN_DONE = 'every item of the plan (todo) is done';
/** A harness's answer for a command it holds until the user approves it. */
const APPROVAL_GATE = /\b(?:requires (?:the user's |your |user )?(?:approval|permission)|(?:awaiting|waiting for) (?:the user's |user |your )?approval|was not approved by the user)\b/i;
/** A status about an ask (answered, or not yet): a newer ask makes it the past; the agent's turn, an unanswered one. */
const ANSWERED_STATUS = /^request #\d+ answered$/;
/** What Status says when the agent's last step read a file and nothing else said where the work stands. */
const READ_STATUS = 'last step: read ';
/** What Status says when aider committed the edits of its step: its turn is over. */
const COMMITTED_STATUS = 'last change committed ';

/** A finding with no identifier is kept (one a step, when the step has no other) only at this many words. */
const PLAIN_FINDING_WORDS = 8;

/** A statement of the agent's private reasoning must carry this much to be kept. */
const REASONING_MIN_SALIENCE = 3;
/** A classifier vote this strong keeps a statement that names no identifier (a cause, a contrast, a failure). */
const STRONG_CUE = 2;
/** A plain finding (a vote this weak) among the first words after a command whose outcome is kept reads that outcome out. */
const READOUT_MAX_SCORE = 2;
const READOUT_SHARED_WORDS = 2;
/** A statement of the step after an ask that shares this many of the ask's words answers it (see step). */
const ANSWER_SHARED_WORDS = 2;

/** What `rm` or `git rm` prints when it removes nothing: a line that failed after its leading removals ran them otherwise. */
const REMOVAL_FAILED = /^(?:rm|rmdir): |^fatal: pathspec /m;
/** A plan sentence that says it is the next step. */
const NEXT_MARKER = /^(?:(?:ok(?:ay)?|so|now)[,]?\s+)?(?:next|then|after (?:that|this)|afterwards|first|now|the next step)\b/i;

/** A statement read with the sentence it refers back to keeps this many words (two sentences' worth of one fact). */
const REFERRED_LINE_WORDS = 44;

/** The candidate `last` with the sentence that refers back to it going on in its line ("…; this risks …"), weighed by `weigh`. */
function goesOnIn(last: Candidate, sentence: string, score: number, weigh: (text: string) => number): Candidate {
  const text = statementOf(continued(last.text, sentence), REFERRED_LINE_WORDS);
  return { ...last, text, score: Math.max(last.score, score), salience: weigh(text) };
}

/** A candidate's mark when its sentence stands under a lead-in of suspected causes ("Likely causes:"). */
function suspicionOf(sentence: Sentence): { readonly suspected?: true } {
  return sentence.lead !== undefined && SUSPECTED_LEAD.test(sentence.lead) ? { suspected: true } : {};
}

/** A statement found in a step, before the step's best are kept. */
interface Candidate {
  readonly cls: SentenceClass;
  /** How strongly the classifier's cues voted for the class. */
  readonly score: number;
  readonly text: string;
  readonly record: number;
  readonly salience: number;
  readonly order: number;
  /** Said under a lead-in of suspected causes ("Likely causes:"): a finding only assumed. */
  readonly suspected?: boolean;
  /** Said in the agent's private reasoning. */
  readonly thought?: boolean;
}

const SECTION_OF: Partial<Record<SentenceClass, FactSection>> = { finding: 'Findings', decision: 'Decisions', failure: 'Ruled out', change: 'Decisions' };
const PRIORITY_OF: Record<FactSection, 0 | 1 | 2 | 3> = { Deliverables: 1, Decisions: 2, Constraints: 2, 'Ruled out': 2, Findings: 3, Archived: 3 };

/** The sentence after a decision that gives its reason ("This avoids…", "Because…"). */
const REASON = /^(?:this|that|it|because|since|so that|so |which|the reason|otherwise)\b.*\b(?:because|so that|avoid\w*|prevent\w*|ensur\w*|keep\w*|mean\w*|since|otherwise|simpler|safer|faster|cleaner|works?|breaks?|fails?|requir\w*|needs?|saves?|removes?|reduces?|fix\w*)\b/i;

/** The working state of one fold: the builder, and what Current state is made of. */
export class Fold {
  private goal: string;
  private status: string;
  private next: string;
  /** The agent's plan as its todo tool last wrote it, and the record of that call. */
  private plan: (TodoPlan & { readonly record: number }) | undefined;
  /**
   * The next step the agent stated last (`sentence`), and whether it said anything in this span (`spoke`: a next
   * step it stated in an earlier span is then overtaken).
   */
  private stated: { sentence: string | undefined; spoke: boolean } = { sentence: undefined, spoke: false };
  /** The user's latest ask: `answered` once a step followed it, `closed` while the latest step made no tool call (the agent replied). */
  private lastAsk: { ordinal: number; text: string; answered: boolean; closed?: boolean } | undefined;
  /**
   * The latest step of this span: whether it made no tool call (or aider committed its edits: the agent replied),
   * and whether a command of it had its outcome kept as a line (the agent's next words read it; see READOUT_MAX_SCORE).
   */
  private readonly latest = { replied: false, outcomeKept: false };
  private question: string | undefined;
  private interrupted: number | undefined;
  /** The files read and written. */
  private readonly deliverables: Deliverables;
  /** Failed commands that later ones replaced, commits that later ones replaced. */
  private readonly commands: CommandHistory;

  constructor(
    private readonly b: SummaryBuilder,
    previous: SummaryState,
    /** How many words a created file's purpose keeps (a gist's length for this head's cap). */
    purposeWords: number,
    /** The units just before the span: steps of the turn the span starts in. */
    before: readonly Unit[] = [],
  ) {
    this.goal = previous.current.goal;
    this.status = previous.current.status;
    this.next = previous.current.next;
    this.deliverables = new Deliverables(b, purposeWords);
    this.deliverables.turnSteps.push(...before.filter((u) => u.kind === 'step'));
    this.commands = new CommandHistory(b);
  }

  user(unit: Unit): void {
    this.deliverables.turnSteps.length = 0;
    for (const part of unit.parts) {
      const split = splitUserText(part.text);
      if (split.interrupted) this.interrupted = stoppedWork(this.b, part.record, this.goal);
      if (split.words === '') continue;
      answerPlan(this.b, split.words, part.record);
      const req = resolvedRequest(this.b.requests.length + 1, part, this.b.offer, this.b.redactor, split.words);
      this.b.requests.push(req);
      // "Go ahead and implement it" ends an earlier "do not modify any code": that rule no longer stands.
      if (liftsReadOnly(split.words)) dropLiftedRules(this.b.facts.Constraints, part.record);
      if (req.continuation && this.goal !== '') {
        // "continue", "i agree, continue": the work asked before goes on; the goal says where it was taken up again
        // (by record: a reply that only says to go on is no request line, so its number would point at nothing).
        this.goal = `${this.goal.replace(CONTINUED_SUFFIX, '')} — continued at r${part.record}`;
        resumedWork(this.b, this.goal);
      } else if (!isGreeting(split.words) && (req.resolved || this.goal === '' || !onlyRules(split.words))) {
        // A message that only lays down rules ("Do not reinit task-master") leaves the goal: the work asked goes on.
        // A short reply ("1", "yes, do that") is worth what it chose: the next step names that, not the digit.
        this.lastAsk = { ordinal: req.ordinal, text: req.resolved ? choiceText(req.resolved) : req.text, answered: false };
        this.goal = `#${req.ordinal} (r${part.record}): ${goalText(req)}`;
        // A next step the agent stated before this ask is overtaken by it; one stated since will say what comes next.
        this.stated.sentence = undefined;
      }
      disputeClaims(this.b, split.words, part.record, this.b.requests.at(-2)?.record);
      this.question = undefined;
      // A failure, the last command or change, of what the user has since asked past is not the state now (Ruled out keeps a failure).
      if (/^(?:blocked:|last command |last change(?:: | committed )|last step: |awaiting the user's )/.test(this.status) || ANSWERED_STATUS.test(this.status) || UNANSWERED_STATUS.test(this.status)) this.status = '';
      this.interrupted = split.interrupted ? part.record : undefined;
      for (const c of extractConstraints(part.text)) {
        this.b.upsert('Constraints', { key: repeatedObjection(this.b, c.sentence) ?? topicKey(c.sentence, this.b.redactor), text: c.sentence, sources: [part.record], priority: c.safety ? 0 : 2, origin: 'exact' });
      }
    }
  }

  /** A step of the agent's; `next`, the unit after it in the span (aider's reply there may say which of its edits were made). */
  step(unit: Unit, next?: Unit): void {
    // The agent takes its turn: an ask said to be unanswered at the last fold is being answered now.
    if (UNANSWERED_STATUS.test(this.status)) this.status = '';
    if (/^answer request #/.test(this.next)) this.next = '';
    const statusBefore = this.status;
    const readsOutcome = this.latest.outcomeKept;
    this.latest.outcomeKept = false;
    const candidates: Candidate[] = [];
    let order = 0;
    // The next step a message states: the first that says it comes next ("Then run Y"), else its last. One stated
    // earlier is overtaken (acted on) when the agent speaks again without stating another; tool calls alone leave it.
    const speaks = unit.parts.some((p) => p.kind === 'text' && p.text.trim() !== '');
    if (speaks) this.stated = { sentence: undefined, spoke: true };
    let marked = false;
    // The first step after an ask answers it: a statement in the ask's own words ("…are examples, not exhaustive" for
    // "are these the only ones or only examples?") is its answer, worth a line even with no identifier in it.
    const asked = this.lastAsk && !this.lastAsk.answered ? stems(this.lastAsk.text) : undefined;
    const weight = (text: string): number => salience(text) + (asked && sharedWords(stems(text), asked) >= ANSWER_SHARED_WORDS ? 1 : 0);
    for (const part of unit.parts) {
      // aider's report of the edits it could not apply: its failures, and nothing of its instructions to the model.
      const rejected = part.kind === 'text' ? editFailureReport(part.text) : undefined;
      if (rejected) {
        for (const why of rejected) this.failure('aider', 'error', clipChars(this.b.redactor.redact(why).text, 200), [part.record]);
        continue;
      }
      // Cursor's reports of tool calls that did not run, printed among the answer: each a failure of that tool. The rules it fetched: what holds here.
      if (part.kind === 'text') for (const t of cursorToolErrors(part.text)) this.failure(t.tool, 'error', t.error, [part.record]);
      const own = part.kind === 'text' ? withoutInjectedBlocks(part.text) : part.text;
      if (part.kind === 'text') for (const r of fetchedRules(part.text, own)) addStatement(this.b, 'Findings', { text: `workspace rule \`${r.name}\`: ${r.directives.join('; ')}`, sources: [part.record], priority: 2 }, 'exact');
      // Thought summaries printed among the answer are reasoning, kept only for their most telling statements.
      const { thoughts, answer } = part.kind === 'text' ? splitThoughts(own) : { thoughts: '', answer: part.text };
      if (thoughts !== '') this.reasoning(thoughts, part.record, candidates, () => order++);
      if (part.kind === 'text') {
        progressReport(this.b, answer, part.record);
        const sentences = sentencesOf(answer);
        layPlan(this.b, sentences, part.record);
        // The candidate the last item under an intro made: the next item under the same intro joins it.
        let listedUnder: { intro: string; at: number } | undefined;
        // The sentence that made the last candidate of this text.
        let madeBy = -1;
        let askedFor = false;
        for (let i = 0; i < sentences.length; i++) {
          const s = sentences[i]!;
          // An item that finishes the sentence above its list is read with it; a bare fragment says nothing.
          const whole = s.intro !== undefined ? withIntro(s.intro, s.text) : undefined;
          // What the agent lists under asking the user for it ("…please add the following files to the chat:") is asked for.
          if (!s.item) askedFor = /[:：]$/.test(s.text) && ASKS_USER_FOR.test(s.text);
          if (s.heading || (s.item && (askedFor || (whole === undefined && isFragment(s.text))))) continue;
          // The sentence a list finishes is said by its items, each with it.
          const next = sentences[i + 1];
          if (next?.intro !== undefined && next.intro === s.text.replace(/[:：]$/, '') && withIntro(next.intro, next.text) !== undefined) continue;
          const { cls, score } = classifySentence(whole ?? s.text, 'assistant', s.lead);
          if (!CONTENT_CLASSES.has(cls)) continue;
          const referent = whole === undefined ? withReferent(sentences, i) : undefined;
          // What a "This …" refers back to made the last line: the sentence goes on in that line, not a line of its own.
          const last = candidates[candidates.length - 1];
          if (referent !== undefined && madeBy === i - 1 && last !== undefined && cls !== 'plan') {
            if (!last.text.includes(s.text)) candidates[candidates.length - 1] = goesOnIn(last, s.text, score, weight);
            madeBy = i;
            continue;
          }
          const read = whole ?? referent ?? listed(sentences, i);
          if (cls === 'plan') {
            // "The file includes: 4. Next steps" lists what a document holds: only an intro that plans makes its bare items steps.
            if (whole !== undefined && isFragment(s.text) && classifySentence(`${s.intro!}:`, 'assistant').cls !== 'plan') continue;
            const says = NEXT_MARKER.test(read);
            if (!marked) this.stated.sentence = statementOf(read, 24);
            marked ||= says;
            continue;
          }
          let text = statementOf(withSubject(read, s.lead), referent !== undefined ? REFERRED_LINE_WORDS : undefined);
          // A decision keeps its reason when the next sentence gives it, and the choice when it said only "a different approach".
          const after = sentences[i + 1];
          if (cls === 'decision' && after && ((!/\b(?:because|since|so that|to avoid|to prevent|to ensure)\b/i.test(text) && REASON.test(after.text)) || VAGUE_CHOICE.test(text))) {
            text = statementOf(`${text.replace(/[.…]$/, '')} — ${after.text}`);
          }
          if (saysNothing(text)) continue;
          // The first words after a command whose outcome is a line say that outcome again, unless they conclude from it.
          if (readsOutcome && cls === 'finding' && score <= READOUT_MAX_SCORE && candidates.length === 0 && i <= 1 && !CONCLUDES.test(text) && !HEDGED.test(text) && this.readOut(text, part.record)) continue;
          // Items of one list under one intro ("I recommend this order because: type checking…; linting…") are one line.
          const previous = listedUnder !== undefined && listedUnder.intro === s.intro && listedUnder.at === candidates.length - 1 ? candidates[listedUnder.at]! : undefined;
          // A hedged item does not join certain ones: the line's "(assumed)" would cover them all.
          if (previous !== undefined && previous.cls === cls && Boolean(previous.suspected) === Boolean(suspicionOf(s).suspected) && HEDGED.test(previous.text) === HEDGED.test(whole ?? s.text)) {
            const joined = `${previous.text.replace(/[.…;]$/, '')}; ${lowerFirst(statementOf(s.text, LISTED_ITEM_WORDS)).replace(/[.;]$/, '')}`;
            if (words(joined).length <= LISTED_LINE_WORDS) {
              candidates[listedUnder!.at] = { ...previous, text: joined, score: Math.max(previous.score, score), salience: salience(joined) };
              continue;
            }
          }
          candidates.push({ cls, score, text, record: part.record, salience: weight(text), order: order++, ...suspicionOf(s) });
          madeBy = i;
          listedUnder = whole !== undefined && s.intro !== undefined ? { intro: s.intro, at: candidates.length - 1 } : undefined;
        }
        // An edit an export rendered in the text (SpecStory's Cursor diffs) wrote its file.
        for (const path of renderedEdits(part.text, leadInOf(unit, unit.parts.indexOf(part)))) this.deliverables.renderedEdit(path, part.record);
        const choice = awaitedChoice(part.text);
        const asked = /\?\s*$/.test(part.text.trim()) ? lastQuestion(part.text) : undefined;
        this.question = choice !== undefined ? `choice of ${choice}` : asked !== undefined ? `answer: ${asked}` : undefined;
        continue;
      }
      if (part.kind === 'reasoning') {
        this.reasoning(part.text, part.record, candidates, () => order++);
        continue;
      }
      // A snippet an export turned into a call never ran, nor did a write its step does not say was made: nothing it would have done is said.
      const touches = part.kind === 'tool' && part.tool && !quotedSnippet(part.tool) ? touchesInStep(unit, unit.parts.indexOf(part), part.tool, this.deliverables.turnSteps) : undefined;
      if (touches && madeInStep(unit, part.tool!, touches, next)) this.tool(part.tool!, touches);
    }
    this.deliverables.turnSteps.push(unit);
    const offer = offerOf(unit);
    if (offer) this.b.offer = offer;
    if (this.lastAsk) this.lastAsk.answered = true;
    // Whether the agent's latest step replied (no tool call, or aider's edits committed in it) or its work goes on.
    this.latest.replied = (this.status !== statusBefore && this.status.startsWith(COMMITTED_STATUS)) || !unit.parts.some((p) => p.kind === 'tool');
    if (this.lastAsk) this.lastAsk.closed = this.latest.replied;
    this.keep(candidates, PER_STEP);
  }

  /** Private reasoning often holds the diagnosis; only its most telling statements are candidates. */
  private reasoning(text: string, record: number, candidates: Candidate[], next: () => number): void {
    const sentences = sentencesOf(text);
    let madeBy = -1;
    for (let i = 0; i < sentences.length; i++) {
      const s = sentences[i]!;
      const { cls, score } = classifySentence(s.text, 'assistant', s.lead);
      if (cls !== 'finding' && cls !== 'failure' && cls !== 'decision') continue;
      // A "This …" whose sentence made the last candidate goes on in it (see step).
      const referent = withReferent(sentences, i);
      if (referent !== undefined && madeBy === i - 1) {
        candidates[candidates.length - 1] = goesOnIn(candidates[candidates.length - 1]!, s.text, score, (t) => salience(t) - 1);
        madeBy = i;
        continue;
      }
      const statement = statementOf(withSubject(referent ?? s.text, s.lead), referent !== undefined ? REFERRED_LINE_WORDS : undefined);
      if (saysNothing(statement)) continue;
      const carried = salience(statement);
      if (carried >= REASONING_MIN_SALIENCE || (score >= STRONG_CUE && carried >= 1)) {
        candidates.push({ cls, score, text: statement, record, salience: carried - 1, order: next(), thought: true, ...suspicionOf(s) });
        madeBy = i;
      }
    }
  }

  /** Keeps the step's best statements of each class: the most salient, in their order. */
  private keep(candidates: readonly Candidate[], limits: Partial<Record<SentenceClass, number>>): void {
    const chosen: Candidate[] = [];
    for (const cls of ['finding', 'decision', 'failure', 'change'] as const) {
      // A plain statement the cues vote for strongly ("This lists all commits, not just those since the merge base") is kept without identifiers.
      let pool = candidates.filter((c) => c.cls === cls && (c.salience >= (MIN_SALIENCE[cls] ?? 0) || (c.score >= STRONG_CUE && c.salience >= 0)));
      // A step whose findings are said in plain words only ("The main page of the web server lists several Perl CGI
      // scripts") still keeps its most telling one: an agent that writes no code spans finds things too.
      if (cls === 'finding' && pool.length === 0) {
        const plain = candidates.filter((c) => c.cls === cls && c.salience >= 0 && words(c.text).length >= PLAIN_FINDING_WORDS && !c.suspected && !HEDGED.test(c.text));
        // The most telling: the strongest vote, then the most salient, then the first said.
        pool = plain.sort((x, y) => y.score - x.score || y.salience - x.salience || x.order - y.order).slice(0, 1);
      }
      pool.sort((x, y) => y.salience - x.salience || x.order - y.order);
      chosen.push(...pool.slice(0, limits[cls] ?? 0));
    }
    for (const c of thoughtsSaidAgain(chosen)) chosen.splice(chosen.indexOf(c), 1);
    chosen.sort((x, y) => x.order - y.order);
    let aimed = -2; // the candidate saying a failure was meant ("The test failed exactly as we expected"): it and the next are found
    for (const c of chosen) {
      // A commit or a push is said by its exact line (hash, branch, message), not by the prose about it.
      if (c.cls === 'change' && (/^(?:committed|pushed)\b/i.test(c.text) || this.deliverables.noteChange(c.text) || handles(c.text).length === 0)) continue;
      if ((c.cls === 'finding' || c.cls === 'failure') && this.commands.reproduced(c.text, c.record)) continue;
      if (c.cls === 'failure' && REPRODUCED.test(c.text)) aimed = c.order;
      const section = c.cls === 'failure' && (c.order === aimed || c.order === aimed + 1) ? 'Findings' : SECTION_OF[c.cls]!;
      const text = c.cls === 'finding' && (c.suspected || HEDGED.test(c.text)) ? `${c.text} (assumed)` : c.text;
      addStatement(this.b, section, { text, sources: [c.record], priority: PRIORITY_OF[section] }, 'narrative');
    }
  }

  /**
   * The exact line of an outcome just recorded takes the record of the agent's words (`text`) that read it out (see
   * READOUT_MAX_SCORE), when they are about it (share two of its words). Whether they were taken so.
   */
  private readOut(text: string, record: number): boolean {
    // The outcome recorded last before the words: the exact line with the latest source just before them.
    let found: { lines: FactLine[]; at: number; source: number } | undefined;
    for (const lines of [this.b.facts.Findings, this.b.facts['Ruled out']]) {
      lines.forEach((l, at) => {
        const source = l.origin === 'exact' ? sourceJustBefore(l.sources, record) : -1;
        if (source >= 0 && (!found || source > found.source)) found = { lines, at, source };
      });
    }
    if (!found || sharedWords(stems(text), stems(found.lines[found.at]!.text)) < READOUT_SHARED_WORDS) return false;
    const line = found.lines[found.at]!;
    found.lines[found.at] = { ...line, sources: mergeSources(line.sources, [record]), refs: (line.refs ?? 0) + 1 };
    return true;
  }

  private tool(tool: ToolInvocation, touches: readonly FileTouch[]): void {
    const sources = tool.resultRecord !== undefined && tool.resultRecord !== tool.callRecord ? [tool.callRecord, tool.resultRecord] : [tool.callRecord];
    const code = exitCode(tool);
    const family = classifyTool(tool.name, tool.input).family;
    const cmd = shellCommand(tool);
    const redactor = this.b.redactor;
    const counts = tool.output !== undefined ? testSummary(tool.output) : undefined;
    // A change the tool says it did not apply (SWE-agent's lint, Codex's apply_patch verification) failed.
    const unapplied = (family === 'edit' || family === 'write') && tool.output !== undefined && changeNotApplied(tool.output) !== undefined;
    const failed = tool.isError || unapplied || (code !== undefined && code !== 0) || (code === undefined && tool.output !== undefined && (commandReportsError(cmd, tool.output) || /\b[1-9]\d* failed\b/.test(counts ?? '')));
    if (!failed) this.deliverables.toolWorked(tool, touches, family, cmd, sources);
    if (!failed) this.commands.noteTouched(touches, tool.resultRecord ?? tool.callRecord);
    if (!failed && cmd !== undefined && tool.output !== undefined) this.deliverables.commandWorked(cmd, touches, tool.resultRecord ?? tool.callRecord);
    else if (cmd !== undefined && tool.output !== undefined && !REMOVAL_FAILED.test(tool.output)) this.deliverables.removed(shellRemovals(cmd, true), tool.resultRecord ?? tool.callRecord);
    if (family === 'todo' && !failed) {
      const plan = todoPlanOf(tool);
      if (plan) this.plan = { ...plan, record: tool.resultRecord ?? tool.callRecord };
    }
    if (tool.output === undefined) return;
    // What the user picked or approved in the agent's dialog (a question, a plan) is their decision, as if typed.
    const decided = failed ? undefined : dialogDecisions(tool.name, tool.input, tool.output);
    for (const text of decided ?? []) addStatement(this.b, 'Decisions', { text, sources, priority: 1 }, 'exact');
    if (decided) return;
    // Only a failure, a command or a change names the call (a read that worked says nothing about itself).
    let labelText: string | undefined;
    const label = (): string => (labelText ??= toolLabel(tool, redactor));
    // A test run's counts, when the tool is a command.
    const tests = cmd !== undefined ? counts : undefined;
    // A coding tool's console, not a file or a page it showed (a read file may hold "Commit …" lines).
    if (cmd === undefined && (family === 'other' || family === 'task')) {
      const committed = consoleEvents(this.b, (paths, at) => this.deliverables.removed(paths, at), tool.output, sources, tool.resultRecord ?? tool.callRecord);
      // aider's turn ends when it commits what it edited: the step is its reply, and Status says what was committed.
      if (committed) this.status = `last change ${committed}`;
    }
    // A look at paths that are not there found their absence: what it saw, not an approach that failed.
    const looks = cmd !== undefined || (tool.isError === true && (family === 'read' || family === 'search' || family === 'list'));
    const absent = failed && looks ? absence(cmd, tool.output, redactor) : undefined;
    if (failed && absent === undefined) {
      if (cmd !== undefined && INFORMATIONAL_EXIT.test(cmd.trim()) && code === 1) return;
      // The user declined the call: their choice, not an approach that failed (the tool's instructions to the model are no cause).
      const declined = tool.output !== undefined ? userRejection(tool.output) : undefined;
      if (declined !== undefined) {
        const said = declined ? `: "${clipChars(redactor.redact(declined).text, 160)}"` : '';
        addStatement(this.b, 'Ruled out', { text: `${label()} rejected by the user${said}`, sources, priority: 2 }, 'exact');
        this.status = `the user rejected ${label()}`;
        return;
      }
      const error = errorLine(changeNotApplied(tool.output) ?? tool.output);
      const at = raisedAt(tool.output);
      const where = at === undefined || !error || error.includes(at.fn) ? '' : /<(?:anonymous|module)>/.test(at.fn) ? ` — at ${at.file}` : ` — at ${at.fn} (${at.file})`;
      // A command that printed nothing but an unusual exit code failed for a reason that code names (`git log` exit
      // 66): that it cannot be done here is worth a line. Silent exits of 1, repeated, would bury the rest.
      const silent = !tests && !error && code !== undefined && code !== 1 ? SILENT_FAILURE : '';
      // A harness that holds the command for the user's approval refused it, and will again (554b9fa6: `swift build` ×49).
      const gate = APPROVAL_GATE.test(error) ? ' (held for the user\'s approval: running it again will not help)' : '';
      const why = redactor.redact(`${tests ? `${tests}; ` : ''}${error}${where}${silent}${gate}${cmd !== undefined && error ? failedLinkNote(cmd, error, redactor) : ''}`).text;
      const codeText = code !== undefined ? `exit ${code}` : 'error';
      this.status = `blocked: ${label()} failed (${codeText})${why ? `: ${why}` : ''}`;
      this.latest.outcomeKept = this.failure(label(), codeText, why, sources);
      if (cmd !== undefined) this.commands.noteFailure(cmd, label(), tool.callRecord);
      else if (family === 'write' || family === 'edit') this.commands.noteEditFailure(label(), touches);
      return;
    }
    // What the command's output says, one finding per command (a later run supersedes it; two alike in their first
    // 60 characters are two): a test run's counts, a short answer, or what a command that worked still printed as wrong.
    const commit = cmd !== undefined ? commitOf(cmd, tool.output, redactor) : undefined;
    // A commit or a configuration applied is said by its own line (hash, command); its output is no other fact.
    const recorded = cmd !== undefined && (commit !== undefined || (CONFIGURING_COMMAND.test(cmd) && !UNDOING_COMMAND.test(cmd)));
    const observed = absent ?? (cmd !== undefined && tests === undefined && !recorded ? observation(cmd, tool.output, redactor) : undefined);
    const notice = cmd !== undefined && tests === undefined && observed === undefined ? outputNotice(cmd, tool.output, redactor) : undefined;
    const said = tests !== undefined ? ['tests', `→ ${tests}`] : observed !== undefined ? ['seen', `→ ${observed}`] : notice !== undefined ? ['notice', `worked but ${notice}`] : undefined;
    if (said) {
      // A tool with no command (Grep, Read) is one subject per path it found missing.
      const label60 = cmd !== undefined ? `\`${commandLabel(cmd, redactor, 60)}\`` : lookLabel(tool, redactor, said[1]!);
      const setting = cmd !== undefined && observed !== undefined ? settingOf(commandCore(cmd), observed) : undefined;
      const subject = setting ?? (cmd !== undefined ? commandCore(cmd) : `${label60} ${said[1]}`);
      const key = `${said[0]}-${subjectKey(setting ?? label60, redactor, 6)}-${contentHash(subject).slice(0, 6)}`;
      const earlier = observed !== undefined && cmd !== undefined ? this.commands.sameAnswer(observed, key) : [];
      this.b.upsert('Findings', { key, text: `${label60} ${said[1]} (as of r${tool.resultRecord ?? tool.callRecord})`, sources: mergeSources(earlier, sources), priority: 3, origin: 'exact' });
      this.latest.outcomeKept = true;
      // A look that found nothing there overcame no failure and replaced no command.
      if (absent !== undefined) {
        this.status = `last command ${label()} ${clipChars(said[1]!, STATUS_OUTPUT_CHARS)}`;
        return;
      }
    }
    if (cmd !== undefined) {
      const replaced = this.commands.noteReplacement(cmd, label(), tool.resultRecord ?? tool.callRecord);
      this.commands.noteWorked(cmd, tool.output, tool.callRecord);
      // A command that failed before and now succeeds (showsItWorked) is no longer ruled out; its error stays a finding.
      const worked = tool.resultRecord ?? tool.callRecord;
      for (const line of showsItWorked(cmd, tool.output, code) ? [...this.b.facts['Ruled out']] : []) {
        const m = line.origin === 'exact' ? FAILED_LINE.exec(line.text) : null;
        if (!m || m[1] !== label() || m[2]) continue;
        this.b.upsert('Findings', { ...line, text: `${line.text.replace(/ → then .* worked \(r\d+\)$/, '')}; later it worked (r${worked})`, sources: [...line.sources, worked], priority: 3 });
      }
      // What it printed says more than that it finished: a test run's counts, a short answer, a warning.
      this.status = commandStatus(this.status, label(), said ? clipChars(said[1]!, STATUS_OUTPUT_CHARS) : code !== undefined ? `exited ${code}` : 'finished', !said && onlyTidies(cmd));
      if (commit) {
        addStatement(this.b, 'Decisions', { text: commit, sources: mergeSources(this.commands.replacedCommits(commit), sources), priority: 2 }, 'exact');
      } else if (UNDOING_COMMAND.test(cmd)) {
        discardWork(this.b, cmd, label(), sources);
      } else if (CONFIGURING_COMMAND.test(cmd) && !replaced) {
        // A command that replaced a failed one is said on the failure's line ("… → then `x` worked"): not again as "applied:".
        const description = toolDescription(tool, redactor);
        const installed = tool.output !== undefined ? installedOutcome(cmd, tool.output) : undefined;
        const outcome = installed ? ` → ${firstLine(redactor.redact(installed).text, 120)}` : '';
        addStatement(this.b, 'Decisions', { text: `applied: ${description ? `${description} — ` : ''}\`${firstLine(redactor.redact(cmd).text, 160, true)}\`${outcome}`, sources, priority: 2 }, 'exact');
      }
    } else if (family === 'write' || family === 'edit') {
      // The file and what was done to it, not the tool's name ("edit_file_v2 tests/utils.test.ts").
      const changed = touches.find((t) => t.access !== 'read');
      this.status = `last change: ${changed ? `${changed.access === 'create' ? 'created' : 'edited'} ${redactor.redact(changed.path).text}` : label()}`;
      this.commands.noteEditWorked(label());
    } else if (family === 'read' && this.status === '' && touches[0]) this.status = `${READ_STATUS}${redactor.redact(touches[0].path).text}`;
  }

  /**
   * A failed tool: one Ruled out line per command, with the verbatim error of
   * each cause it failed with. The same command failing again counts up (×n);
   * other commands failing with the same error join the line ("and 3 more").
   * An interruption by the user is not an approach that failed.
   */
  private failure(label: string, codeText: string, why: string, sources: number[]): boolean {
    // An interruption by the user is no failed approach; a failure that says nothing about why is no line
    // (a remote command exiting 1 in silence, dozens of times, would bury the failures that say why).
    if (/\binterrupted by (?:the )?user\b/i.test(why) || why.trim() === '' || TOOL_PROTOCOL_ERROR.test(why)) return false;
    const signatures = errorSignatures(why);
    const shared = (error: string): boolean => [...errorSignatures(error)].some((sig) => signatures.has(sig));
    const lines = this.b.facts['Ruled out'];
    for (let i = 0; i < lines.length; i++) {
      const line = lines[i]!;
      if (line.origin !== 'exact') continue;
      const m = FAILED_LINE.exec(line.text);
      if (!m) continue;
      const [, first, more, code, times, error] = m;
      const kept = mergeSources(line.sources, sources);
      // The same command again (a bare tool name — aider's console — is no command: only the error can match it).
      // One line per command: what replaced it stays said, the line being the only place that names it.
      if (first === label && !more && label.startsWith('`') && !label.includes('…')) {
        const replaced = REPLACED_TAIL.exec(line.text)?.[0] ?? '';
        lines[i] = { ...line, text: `${failedAgain(label, codeText, times, error!, why, shared)}${replaced}`, sources: kept, refs: (line.refs ?? 0) + 1 };
        return true;
      }
      // A bare tool name says nothing of the attempt but its error: two different errors are two attempts.
      const bare = !label.startsWith('`') || !first!.startsWith('`');
      if (shared(error!) && (!bare || error!.replace(/\d+/g, '#') === why.replace(/\d+/g, '#'))) {
        const others = Number(more ?? 0) + (first === label ? 0 : 1);
        lines[i] = { ...line, text: `${first}${others ? ` and ${others} more` : ''} failed (${code})${times ? ` ×${times}` : ''}: ${error}`, sources: kept, refs: (line.refs ?? 0) + 1 };
        return true;
      }
    }
    // The same failure after it was once overcome is ruled out again (its finding moves back).
    const resolved = this.b.facts.Findings.find((l) => l.origin === 'exact' && l.text.startsWith(`${label} failed (`) && RESOLVED.test(l.text) && shared(l.text.replace(RESOLVED, '')));
    if (resolved) {
      // It says again what it failed with before it worked: those causes are still ruled out.
      const [, , , , times, error] = FAILED_LINE.exec(resolved.text.replace(RESOLVED, ''))!;
      this.b.upsert('Ruled out', { ...resolved, text: failedAgain(label, codeText, times, error!, why, shared), sources: mergeSources(resolved.sources, sources), priority: 2 });
      return true;
    }
    addStatement(this.b, 'Ruled out', { text: `${label} failed (${codeText}): ${why}`, sources, priority: 2 }, 'exact');
    return true;
  }

  /** What follows a request's number in Next: its words, unless the Goal line just above quotes that request already. */
  private quoted(ask: { ordinal: number; text: string }, state?: string): string {
    if (this.goal.startsWith(`#${ask.ordinal} `)) return ` (the goal${state ? `, ${state}` : ''})`;
    return `${state ? ` (${state})` : ''}: ${statementOf(ask.text, 24)}`;
  }

  finish(units: readonly Unit[]): void {
    const deliverable = this.deliverables.finish();
    const todo = currentPlan(this.plan, this.goal);
    const plan = planLine(todo, this.b.current.plan, this.goal, (t) => plain(this.b.redactor.redact(t).text));
    const last = units[units.length - 1];
    let status = this.status;
    if (this.interrupted !== undefined && last?.kind === 'user') status = `the user interrupted the agent (r${this.interrupted})`;
    else if (this.question && last?.kind === 'step') status = `awaiting the user's ${this.question}`;
    else if (this.lastAsk && !this.lastAsk.answered) status = `the user's request #${this.lastAsk.ordinal} is not answered yet`;
    // "answer request #9" from an earlier fold is done with once a later request was asked and answered (or it was, below).
    // "continue request #6" from an earlier fold is done with once the agent replied or the user asked again.
    // "wait for the user's next request" holds only as far as its span: it is said again below when it still does.
    let next =
      (this.lastAsk?.answered && /^answer request #/.test(this.next)) ||
      ((this.latest.replied || this.lastAsk) && /^continue request #/.test(this.next)) ||
      (this.lastAsk && PLAN_NEXT.test(this.next)) ||
      this.next.startsWith(WAITING_NEXT) ||
      (this.stated.spoke && this.next.endsWith(STATED_NEXT))
        ? ''
        : this.next;
    const planned = todo && planNext(todo);
    // A command the harness holds for the user's approval blocks the work until they give it.
    const held = status.startsWith('blocked:') && APPROVAL_GATE.test(status) ? /^blocked: (.+?) failed \(/.exec(status)?.[1] : undefined;
    if (held !== undefined) next = `ask the user to approve ${held} (the harness holds it)`;
    else if (planned) next = planned;
    else if (this.lastAsk && !this.lastAsk.answered) next = `answer request #${this.lastAsk.ordinal}${this.quoted(this.lastAsk)}`;
    // Options put to the user are theirs to pick: the agent waits rather than acting on its own plan.
    else if (this.question?.startsWith('choice') && last?.kind === 'step') next = "wait for the user's choice";
    else if (this.stated.sentence) next = `${this.stated.sentence}${STATED_NEXT}`;
    // A plan whose items are all done says nothing of what comes next: the request it served does.
    const planDone = next === '' && todo !== undefined && todo.open.length === 0;
    // The span ends with the agent's answer to the last ask and nothing planned: the turn is the user's.
    const ask = this.lastAsk?.ordinal ?? askOf(this.goal);
    const answered = last?.kind === 'step' && this.latest.replied && (this.lastAsk ? this.lastAsk.answered && this.lastAsk.closed : ask !== undefined);
    if (answered && next.startsWith(`answer request #${ask}`)) next = '';
    // The span ends while the agent is still calling tools for the last ask, or for the goal asked before it: that work goes on.
    if (next === '' && last?.kind === 'step' && (this.lastAsk ? this.lastAsk.answered && !this.lastAsk.closed : !answered && ask !== undefined)) next = `continue request #${ask}${this.lastAsk ? this.quoted(this.lastAsk, 'in progress') : ' (the goal, in progress)'}`;
    // An answer given while the last command still fails leaves that failure open (Status says which).
    if (next === '' && answered) next = `${WAITING_NEXT} (the agent answered request #${ask}${status.startsWith('blocked:') ? ', its last command still failing' : ''})`;
    if (planDone) next = next === '' ? PLAN_DONE : `${next}; ${PLAN_DONE}`;
    if (status === '' && answered) status = `request #${ask} answered`;
    this.b.current = {
      goal: plain(this.goal),
      deliverable,
      status: plain(status),
      next: plain(next),
      ...(plan ? { plan } : {}),
    };
  }
}

/** Current-state text without markdown. */
function plain(text: string): string {
  return text.replace(/\*\*|__/g, '').replace(/\s+/g, ' ').trim();
}
