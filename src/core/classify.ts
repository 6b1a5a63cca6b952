/**
 * Sentence classes: what a sentence does in the conversation, decided before
 * anything is summarized (seed 000, "differentiated compression").
 *
 * A user sentence is an ask, a rule (a prescriptive standing constraint), a
 * pleasantry, or other (pasted code, logs). An agent sentence is a finding (a
 * discovered truth), a decision (a choice, with its reason when stated), a
 * failure (an approach that did not work, an error that blocked it), a plan
 * (a next step beyond the immediate action), a change (a report of work
 * done), process (narration of its own tool steps: "Let me…", "Now I'll…"),
 * a pleasantry, or other (headings, code, offers and questions to the user,
 * general explanation). Process and pleasantry never become summary lines.
 *
 * The cues are data: each is a pattern, the class it votes for and a weight;
 * a sentence takes the class with the highest total, and opening cues
 * (process, pleasantry) decide before the rest is read. Deterministic and
 * cheap: a handful of regular expressions per sentence.
 */
import {
  AGENT_CUES, BENEFIT_CLAIM, CHOSEN_ACTION, CONCEDING, CONVERSATION_NARRATION, DISCOURSE_OPENING, EXPECTATION, FILE_REQUEST, FLUFF, PLANNED_EDIT, QUALITY_CLAIM,
  GERUND_CLAUSE_END, GERUND_FINITE, HELP_OPENING, IMPERATIVE_OPENING, IMPERATIVE_PLURAL, LEAD_IN, LEADING_REASON, LOOK_NARRATION, NARRATED_ACT, NARRATED_ACTION, NARRATED_AFTER, PURPOSE_CLAUSE, REASON_CLAUSE,
  NARRATION, NOT_A_RULE, NOTHING_KNOWN, OBSERVED, OFFER, PLEASANTRY_OPENING, PLEASANTRY_SENTENCE, PRESCRIBED, PROCESS_OPENING, PROGRESS_GERUND, RESTATED_ASK,
  REPORT, REQUEST_ECHO, RULE_CLAUSE, RULE_CORRECTION, RULE_IMPERATIVE, RULE_IMPERATIVE_OTHER, RULE_LEAD, RULE_MODAL, type SentenceClass,
  type SpeakerRole, TITLE_CASE, WORK_GERUND
} from './cues';
export { SENTENCE_CLASSES, CONTENT_CLASSES, CHOICE_CUE } from './cues';
export type { SentenceClass, SpeakerRole, Cue } from './cues';

export interface Classified {
  readonly cls: SentenceClass;
  /** Total weight of the winning class (0 for a default). */
  readonly score: number;
}

/**
 * How a user sentence states a standing rule (verbatim prescriptive wording): as a whole ("Never commit without
 * signing."), or in a clause of a sentence that also asks for something ("run them in order, but only one at a time").
 */
export function ruleKind(sentence: string): 'whole' | 'clause' | undefined {
  const s = sentence.trim();
  if (s.endsWith('?')) return undefined;
  const body = s.replace(RULE_LEAD, '');
  if (NOT_A_RULE.test(body)) return undefined;
  if (RULE_IMPERATIVE.test(body) || RULE_IMPERATIVE_OTHER.test(body) || RULE_MODAL.test(s) || RULE_CORRECTION.test(s)) return 'whole';
  return RULE_CLAUSE.test(s) && !REPORT.test(body) ? 'clause' : undefined;
}

/** Whether a user sentence states a standing rule, as a whole or in a clause. */
export function isRuleSentence(sentence: string): boolean {
  return ruleKind(sentence) !== undefined;
}


/** Text that is code, a log line, a table row or a path, not prose. */
export function looksLikeCode(sentence: string): boolean {
  if (/^\s*\d+\s*[:→|]/.test(sentence)) return true;
  if (/^\s*(?:def|class|import|from|return|const|let|var|function|if|for|while|self\.|export|public|private|#include|package|func|fn|use|pub|async|await|throw|raise)\b[^.!?]*[({=;:]/.test(sentence)) return true;
  if (/^\s*(?:\$|❯|>>>|PS [A-Z]:\\|[\w.-]+@[\w.-]+:)\s/.test(sentence)) return true;
  if (/^\s*(?:[}\])]|\/\/|\/\*|\*\s|@(?:param|returns?|template|type|throws|example)\b|<\/?[a-zA-Z][\w-]*[\s>])/.test(sentence)) return true;
  if (/^\s*\|.*\|\s*$/.test(sentence)) return true;
  if (/^\s*[\w./\\~-]+\s*$/.test(sentence) && /[/\\.]/.test(sentence)) return true;
  const symbols = sentence.replace(/[^{}()[\];=<>$\\|]/g, '').length;
  return symbols >= 4 && symbols / sentence.length > 0.06;
}

/** Words of prose (not code, not symbols). */
function proseWords(text: string): number {
  return text.split(/\s+/).filter((w) => /[a-z]{2,}/i.test(w)).length;
}

/** A heading or a label without a statement: "Current Implementation Analysis", "Files changed:". */
function isHeading(text: string): boolean {
  const words = proseWords(text);
  if (words === 0) return true;
  // A list fragment with no verb ("The `tasks` command and all subcommands") states nothing.
  if (words <= 8 && !/[.!?]$/.test(text) && !NAMED_VERB.test(text)) return true;
  if (/[:：]$/.test(text) && words <= 8) return true;
  if (words <= 5 && !/[.!?]$/.test(text) && !/\b(?:is|are|was|were|has|have|does|did|do|can|will|uses|works|fails|failed|passes|passed)\b/i.test(text)) return true;
  return false;
}

/**
 * A list item that says nothing without its lead: a few words and no verb of
 * its own ("Local `main` branch (if it exists)", "Test files (*.test.ts)").
 */
export function isFragment(text: string): boolean {
  const words = text.replace(/`[^`]*`|\([^)]*\)/g, ' x ').split(/\s+/).filter((w) => /[a-z]/i.test(w));
  return words.length <= 10 && !FINITE_VERB.test(text.replace(/`[^`]*`|\([^)]*\)/g, ' '));
}

/**
 * A verb that makes a statement of a fragment (inflected forms only: "show" and "test" are nouns in a list). A
 * participle that qualifies a noun ("identification based on the code", "issues related to X", "new/changed/fixed
 * entries") makes none.
 */
const FINITE_VERB = /\b(?:is|are|was|were|has|have|had|does|did|do|can|cannot|will|would|should|could|must|may|might|(?<!\/)(?!(?:based|related)\b)\w{2,}ed(?!\/))\b|\b(?:fails|works|runs|returns|uses|needs|requires|supports|contains|exists|passes|breaks|calls|reads|writes|shows|lists|creates|points|causes|means|keeps|sets|gets|gives|takes|makes|matches|blocks|ignores|handles|expects|accepts|includes|lacks|stores|loads|checks|starts|stops|listens|resolves|overrides|depends|defaults|belongs|pass|fail|exist|remain|crash|hang|succeed|differ)\b/i;

/** A user reporting that something does not work ("still doesn't work", "i got this error"). */
const USER_FAILURE = /\b(?:(?:still )?(?:does ?n[o']?t|is ?n[o']?t|not) work(?:ing)?|(?:got|getting|get|see|seeing) (?:this|an|the|a|same) (?:error|exception|issue)|is (?:broken|failing)|(?:still )?fails?\b|(?:still )?failing|(?:is|are) not (?:starting|running|loading|showing|working)|nie działa|не работает)/i;

/** A user pointing at a rules file (Cursor's `@user-preferences.mdc`). */
const RULES_FILE = /@[\w./-]+\.mdc\b/;

/** A requirement the user states about the result ("This should be a client-only app", "The list should persist"). */
const USER_REQUIREMENT = /^(?!(?:i|we) think\b|(?:should|must|can|could|would|will) )(?:[\w`'".\-@/]+ ){0,6}?(?:should|must|needs? to|has to|have to|shall)(?: not| never| always| only)? (?!i\b|we\b)\w+/i;

function classifyUser(sentence: string): Classified {
  if (looksLikeCode(sentence) || looksLikeLog(sentence)) return { cls: 'other', score: 0 };
  if (isRuleSentence(sentence) || (RULES_FILE.test(sentence) && sentence.replace(/@[\w./-]+/g, '').replace(/\b(?:yes|no|see|per|follow|as (?:specified|described) (?:in|by)|use|and|the|rules?|please)\b|[,.;:!]/gi, '').trim().split(/\s+/).filter(Boolean).length <= 3)) return { cls: 'rule', score: 1 };
  if (!sentence.endsWith('?') && (USER_REQUIREMENT.test(sentence) || /\bonly (?:after|if|when|use|modify|change|touch|edit|work|run|read|write|commit|push|in|on|from|with)\b|\b(?:prefer|try to minimi[sz]e|maximum \d|at most \d|no more than)\b/i.test(sentence))) return { cls: 'rule', score: 0.5 };
  const rest = sentence.replace(PLEASANTRY_OPENING, '');
  if (rest.trim().length < 3 || /^(?:thanks|thank you|cool|nice|great|perfect|awesome|good job|well done|hi|hello|hey)\b[\s\w,!.]{0,20}$/i.test(sentence)) return { cls: 'pleasantry', score: 1 };
  if (USER_FAILURE.test(sentence) && !sentence.endsWith('?')) return { cls: 'failure', score: 1 };
  return { cls: 'ask', score: 0 };
}

/** A line of pasted output: a log record, a stack frame, a prompt, escape codes, a key: value dump. */
export function looksLikeLog(sentence: string): boolean {
  if (/\x1b\[|\[\d+(?:;\d+)*m/.test(sentence)) return true;
  if (/^\s*(?:at \S+ \(|at \/|File "|Traceback|\d{4}-\d\d-\d\d[ T]\d\d:\d\d|\[\d\d:\d\d|\w+(?:\.\w+)+ - (?:INFO|DEBUG|WARNING|ERROR)\b|(?:INFO|DEBUG|WARN|WARNING|ERROR|FATAL|TRACE)[: \]])/.test(sentence)) return true;
  if (/^\s*[A-Z][\w ]{0,20}:\s{2,}\S/.test(sentence)) return true;
  if (/^\s*(?:error|warning|fatal): /.test(sentence) && !/\b(?:i|you|we)\b/i.test(sentence)) return true;
  return false;
}

/** A heading about how errors are dealt with ("Error Recovery:", "Failure handling"). */
const ERROR_HANDLING = /\b(?:error|failure|exception)s? (?:handling|recovery|reporting|messages?|management|logging|propagation|boundar\w*)\b/i;

/** A lead-in over causes the agent only suspects: what stands under it is a finding, assumed. */
export const SUSPECTED_LEAD = /\b(?:possible|potential|likely|probable|common|suspected) (?:causes|culprits|reasons|explanations)\b|\bhypothes[ie]s\b/i;

/** What a heading or a lead-in above a sentence says about the sentences under it. */
const LEAD_CLASSES: ReadonlyArray<readonly [RegExp, SentenceClass]> = [
  // Causes only suspected ("Likely causes:", "Explain common causes in this architecture:") are findings, marked assumed.
  [SUSPECTED_LEAD, 'finding'],
  // Under a question ("## 1. Semantic Overlays - Examples or Exhaustive?") stands its answer; under an offer, options.
  [/^(?!.*\b(?:would you like|do you want|want me to|shall i|should i|should we|which (?:one|would|do you))\b).*\?\s*$/i, 'finding'],
  [/\b(?:options?|alternatives|would you like|do you want|want me to|you (?:can|could|may|might)|choose|pick one|which (?:one|would)|here are (?:your|some|a few)|possible (?:fixes|solutions|approaches)|to use (?:it|the|this)|usage|how to|examples?(?!\s*(?:&|and)\s)|e\.g\.)\b/i, 'other'],
  // A review's grading heads what it found ("Critical / high (fix first)", "Security concerns", "Bugs").
  [/\b(?:root cause|cause|problem|issue|finding|findings|analysis|diagnos\w*|observ\w*|discover\w*|what (?:i|we) found|key (?:insight|facts?)|result|results|status|critical(?: issues?| bugs?| findings?| \/ high| and high|, high)|severity|(?:bugs?|vulnerabilit(?:y|ies)|gaps?|risks?|concerns?|weakness(?:es)?)(?! (?:(?:have |has )?(?:been |were |are |is )?)(?:fixed|resolved|addressed|closed)))\b/i, 'finding'],
  // "Updated Appendix TODO Items:", "Added next steps section:" head what was changed in a document, not the plan.
  [/^[^a-z]*(?:updated|added|created|reorganized|reorganised|rewrote|rewritten|expanded|revised|amended)\b/i, 'change'],
  [/\b(?:next steps?|todo|to do|remaining|still (?:needed|to do)|follow[- ]ups?|recommend\w*|suggest\w*|to (?:complete|finish))\b/i, 'plan'],
  [/\b(?:plan|steps|here's what (?:i'll|we'll|i will|we will) do|we need to|i'll need to|to do this)\b/i, 'plan'],
  [/\b(?:decision|decisions|approach|solution|strategy|design|architecture)\b/i, 'decision'],
  // "Changes made:", "Updates", "Fixes applied"; not a title's noun ("CRITICAL UPDATE: NVMe Error Timeline").
  [/\b(?:changes?|changed|updates|^update\b|updated|fix(?:es|ed)?(?! first| next| later| them| these| this| it)|implement\w*|added|created|done|completed|summary of|what (?:i|we) (?:did|changed)|features?|includes?|deliverables?|files? (?:created|modified))\b/i, 'change'],
  // "Error Recovery", "Error handling" head how the code deals with errors: what it does, not what failed.
  [ERROR_HANDLING, 'finding'],
  // "Errors:", "Failed attempts", "What went wrong" head failures; a title naming an error ("NVMe Error Timeline") does not.
  [/^[^a-z]*(?:errors?|failures?|failed|issues encountered|problems encountered|what went wrong|blockers?)\b|\b(?:errors?|failures?) (?:encountered|seen|found|hit|so far)\b/i, 'failure'],
];

/** The class a lead-in gives to the plain statements under it, if any. */
export function leadClass(lead: string | undefined): SentenceClass | undefined {
  if (!lead) return undefined;
  for (const [pattern, cls] of LEAD_CLASSES) if (pattern.test(lead)) return cls;
  return undefined;
}

/** The verbs a short statement must have to be one (no catch-all: "commands" is a noun). */
const NAMED_VERB = /\b(?:is|are|was|were|has|have|had|does|did|do|can|cannot|can't|will|won't|would|should|could|may|might|must|uses?|used|works?|worked|fails?|failed|passes|passed|returns?|returned|contains?|stores?|calls?|reads?|writes?|runs?|ran|shows?|showed|exists?|seems?|appears?|looks?|means?|requires?|supports?|expects?|handles?|creates?|sets?|gets?|gives?|points?|breaks?|blocks?|ignores?|includes?|lacks?|needs?|takes?|accepts?|matches?|causes?|caused|keeps?|found|became|got|went|stopped|started|added|removed|changed|fixed|updated|created|moved|renamed|deleted)\b/i;

/** A declarative statement: a subject and a verb, not a fragment. */
const STATEMENT_VERB = /\b(?:is|are|was|were|has|have|had|does|did|do|can|cannot|can't|will|won't|would|should|could|may|might|must|uses?|used|works?|worked|fails?|failed|passes|passed|returns?|returned|contains?|stores?|calls?|reads?|writes?|runs?|ran|shows?|showed|exists?|seems?|appears?|looks?|means?|requires?|supports?|expects?|handles?|creates?|sets?|gets?|gives?|generates?|produces?|points?|listens?|resolves?|breaks?|blocks?|ignores?|includes?|lacks?|needs?|takes?|accepts?|checks?|matches?|leads?|causes?|caused|defines?|keeps?|found|became|got|went|came|stops?|stopped|starts?|started|arrives?|goes|go|[a-z]+(?:s|ed))\b/i;

/** Interjections a concession may open with ("Ah yes, you're right - …", "Oh, I apologize"). */
const INTERJECTIONS = /^(?:(?:ah+|oh+|hmm+|yes|yeah|right|ok(?:ay)?|i see)[\s!.,:;—–-]+)+/i;

function classifyAssistant(sentence: string, lead?: string): Classified {
  if (looksLikeCode(sentence) || /^[+-]\s{2,}|^[+-](?=[^\s+-])/.test(sentence)) return { cls: 'other', score: 0 };
  // Code on its own (a command, a call) states nothing: what it did is in its result.
  if (/^(?:`[^`]+`[\s,;.]*)+$/.test(sentence)) return { cls: 'other', score: 0 };
  // A quotation alone (a test's name, a message echoed) is a name, not a statement.
  if (/^["“][^"“”]+["”][.,;]?$/.test(sentence)) return { cls: 'other', score: 0 };
  // Agreeing with the user or apologising restates what the user said (their request keeps it): no statement of its own.
  if (CONCEDING.test(sentence.replace(INTERJECTIONS, ''))) return { cls: 'pleasantry', score: 0 };
  // A pleasantry opening: what follows it decides ("Perfect! The commit is signed." is a finding).
  const afterPleasantry = sentence.replace(PLEASANTRY_OPENING, '').trim();
  const body = afterPleasantry.replace(DISCOURSE_OPENING, '').trim();
  if (body.length < 4 || proseWords(body) === 0) return { cls: proseWords(sentence) > 0 ? 'pleasantry' : 'other', score: 0 };
  // Telling the user what they want restates their ask: the request log keeps it in their words.
  if (RESTATED_ASK.test(body)) return { cls: 'pleasantry', score: 0 };
  // "I see the agents are getting permission denials", "Looking at the code, X is handled in `initConfig`":
  // the opening reports that the agent looked; what it saw decides.
  const seen = OBSERVED.exec(body);
  if (seen && body.length - seen[0].length >= 12) {
    const what = classifyAssistant(body.slice(seen[0].length).replace(/^\w/, (c) => c.toUpperCase()), lead);
    if (what.cls === 'finding' || what.cls === 'failure' || what.cls === 'decision') return what;
  }
  if (PROCESS_OPENING.test(body) || NARRATED_ACTION.test(body) || NARRATED_AFTER.test(body) || /^\((?:self-correction|refinement|note to self|thinking)\b/i.test(body)) {
    // A choice inside the narration is a decision when it names what it replaces ("…a delayed redirect instead of a new
    // tab"); "Let me try a different approach - using `tags add`…" or "…and try the CLI instead" is the agent trying things.
    // "I'll help you redact secrets instead of blocking commits" restates the request (the request keeps it).
    // "Let me check if dnsmasq is using 5335 instead of forwarding", "Let me check the directory and then switch to
    // the session": a look, whatever it names, decides nothing.
    // "Let me switch to the session directory:" announces the tool step that follows: the step is the record of it.
    if (/[:：]\s*$/.test(body)) return { cls: 'process', score: 0 };
    if (/\b(?:instead of|rather than|in favou?r of|switch(?:ing)? (?:from \S+ )?to)\b/i.test(body) && !HELP_OPENING.test(body) && !LOOK_NARRATION.test(body)) return { cls: 'decision', score: 3 };
    // "I need to create the base structure myself since the agents can't get permission", "Since Claude Code has no
    // setting for it, let me move on to Option 3": an action with its reason is a choice, unless it is a look.
    const action = body.replace(LEADING_REASON, '');
    if (REASON_CLAUSE.test(body) && (CHOSEN_ACTION.test(action) || NARRATED_ACT.test(action)) && !LOOK_NARRATION.test(action) && !HELP_OPENING.test(action) && proseWords(body) >= 8) return { cls: 'decision', score: 2 };
    return { cls: 'process', score: 0 };
  }
  if (REQUEST_ECHO.test(body) || CONVERSATION_NARRATION.test(body)) return { cls: 'process', score: 0 };
  // A stated cause keeps it ("the issue is X"), not where a problem happens ("…where the problem is occurring").
  if (NARRATION.some((pattern) => pattern.test(body)) && !/\b(?:because|root cause|turns out|is caused by|the (?:issue|problem|cause) (?:is|was)(?! (?:occurring|happening|coming|arising|located)\b))\b/i.test(body)) return { cls: 'process', score: 0 };
  if (PLEASANTRY_SENTENCE.test(body) || PLEASANTRY_SENTENCE.test(sentence) || (FLUFF.test(body) && !/\b(?:because|error|fail|root cause)\b/i.test(body))) return { cls: 'pleasantry', score: 0 };
  if (EXPECTATION.test(body) || PLANNED_EDIT.test(body) || QUALITY_CLAIM.test(body) || PRESCRIBED.test(body) || NOTHING_KNOWN.test(body) || (BENEFIT_CLAIM.test(body) && !/[`\d]/.test(body))) return { cls: 'other', score: 0 };
  // A sentence that stops at a conjunction ("This is significant because") was cut where a list began: it states nothing.
  if (/\b(?:because|and|or|but|that|which|since|when|if|to|says|said|reads|shows|showed)\s*[:：]?\s*$|\b(?:with|of|for|as|the|a|an|is|are|was|were|by)\s*$/i.test(body)) return { cls: 'other', score: 0 };
  if (FILE_REQUEST.test(body)) return { cls: 'process', score: 0 };
  if (/^(?:this|here) is (?:a |an |the )?(?:comprehensive |detailed |complete |full |high-level |brief |quick )?(?:plan|overview|summary|breakdown|outline|list|rundown)\b/i.test(body)) return { cls: 'other', score: 0 };
  // "Goal: Enable Claude Code integration with Helium…": the agent restating a task (the user's, or an old session's) is no fact.
  if (/^(?:the )?(?:goal|objective|task|mission)s?\s*[:：]\s*\S/i.test(body)) return { cls: 'other', score: 0 };
  // A gerund fragment with no verb of its own ("Building an interactive review canvas with ranked findings."): a progress note.
  if (PROGRESS_GERUND.test(body) && !/\b(?:is|are|was|were|has|have|had|does|did|do|can|will|would|should|could|must|caused?|causes|fails?|failed|works?|worked|returns?|returned|means)\b/i.test(body)) return { cls: 'process', score: 0 };
  // "Fixing the typecheck error in the new tests", "Also updating the store": work under way, said without a subject.
  // With its reason or its limit ("Injecting `fid` only on refresh paths, not on access tokens") it is a choice.
  const gerund = WORK_GERUND.exec(body);
  if (gerund && !TITLE_CASE.test(body) && !GERUND_FINITE.test(body.split(GERUND_CLAUSE_END)[0]!.replace(/`[^`]*`/g, ' ').slice(gerund[0].length))) {
    if (/\b(?:only|not|instead of|rather than|since|because|so that|to (?:avoid|prevent|keep|preserve)|untouched|as is|unchanged)\b/i.test(body)) return { cls: 'decision', score: 2 };
    // "Adding `extractRefreshToken` to `extractToken.ts`" says what changed; "Fixing the lint" does not.
    return /`[^`]+`/.test(body) ? { cls: 'change', score: 1.5 } : { cls: 'process', score: 0 };
  }
  if (LEAD_IN.test(body) || /^\[[^\]]+\]\([^)]+\)\.?$/.test(body)) return { cls: 'other', score: 0 };
  // What a name does, glossary-style ("`inplace=True`: Modifies the DataFrame directly instead of returning a new copy"):
  // a statement about the code, not a choice, whatever "instead of" it holds.
  if (/\b(?:instead of|rather than)\b/i.test(body) && /^`[^`]+`(?:\s*\([^)]{0,40}\))?\s*[:—–-]\s+[A-Z][a-z]+s\b/.test(body)) return { cls: 'finding', score: 1 };
  // An option put to the user, even with its label dropped ("Proceed with slate troubleshooting (recommended) - …"), is no choice made.
  // So is an alternative weighed beside another ("Or blocky should bind to port 53 instead of dnsmasq").
  if (OFFER.test(body) || /^(?:option|choice|alternative) \w{1,2}\b/i.test(body) || OPTION_TAG.test(body) || /^or\s+(?!rather\b|so\b)\w/i.test(body)) return { cls: 'other', score: 0 };
  if (/\?\s*$/.test(body)) return { cls: 'other', score: 0 };
  // Advice on a condition ("If the schema was deleted unintentionally and is still needed, it should be restored"):
  // nothing was done or decided.
  if (/^if\b[^,]{3,200},\s*(?:then\s+)?(?:it|you|we|this|that|they|the \w+)\s+(?:should|could|would|might|may|can)\b/i.test(body)) return { cls: 'other', score: 0 };
  // A bare verb with its object ("Run tests to ensure everything works", "List the files needed…") is a step to take,
  // whatever its purpose clause says it is for.
  const instruction = isInstruction(body);
  if (instruction && lead === undefined && !/[:：]\s*$/.test(body)) return { cls: 'plan', score: 1 };
  // A later step of an approach about to be taken ("Then, `Promise.all` will be used to await them", "Finally, the array
  // will be iterated to fill the `Set`"): how the work will go, read with the steps before it, not a choice of its own.
  if (SEQUENCED_STEP.test(body.replace(/`[^`]*`/g, 'x'))) return { cls: 'plan', score: 1.5 };
  const scores = new Map<SentenceClass, number>();
  for (const cue of AGENT_CUES) if (cue.pattern.test(body) && (cue.also?.test(body) ?? true)) scores.set(cue.cls, (scores.get(cue.cls) ?? 0) + cue.weight);
  const fromLead = leadClass(lead);
  // Items under "Options:" or "Would you like me to:" are offers, under "Usage:" instructions: not facts.
  if (fromLead === 'other' && !/\b(?:root cause|because|turns out|is caused by|failed|didn't work|does not work)\b/i.test(body)) return { cls: 'other', score: 0 };
  if (fromLead) scores.set(fromLead, (scores.get(fromLead) ?? 0) + 1.5);
  // Under "Error Recovery:", "Failed operations provide clear error messages" says what the code does.
  if (lead !== undefined && ERROR_HANDLING.test(lead)) scores.delete('failure');
  let best: SentenceClass | undefined;
  let top = 0;
  for (const cls of CUE_ORDER) {
    const s = scores.get(cls) ?? 0;
    if (s > top) {
      best = cls;
      top = s;
    }
  }
  // A line that introduces what follows ("…, the files most likely to need changes are:", "Best practice:") states nothing itself
  // unless its own words say something ("Found 219 errors in 31 files:").
  // A section or step number ("**Fuzzy membership functions** (Section 2.3):") is a reference, not a measured value.
  if (/[:：]\s*$/.test(body) && (top < 2.5 || isFragment(body)) && !/\d|\b(?:found|confirm\w*|works?|fail\w*|because)\b/i.test(body.replace(NUMBERED_REFERENCE, ' '))) return { cls: 'other', score: 0 };
  if (best !== undefined && top >= 1.5) return { cls: best, score: top };
  if (isHeading(body)) return { cls: 'other', score: 0 };
  // "Yes, overlays have gradations.": a short answer to the user's question states what is so.
  if (/^(?:yes|yep)\b/i.test(sentence) && proseWords(body) >= 2 && NAMED_VERB.test(body) && !/^(?:it|that|this|these|those|they|we|i|you)\b/i.test(body)) return { cls: 'finding', score: 1 };
  if (afterPleasantry !== sentence && proseWords(body) <= 3) return { cls: 'pleasantry', score: 0 };
  // A bare verb with its object ("List the files needed…", "Mention that…") is a step to take, not what was found.
  if (instruction) return { cls: 'plan', score: 1 };
  // A plain statement about the work is what was found, unless it is general talk.
  if (proseWords(body) >= 4 && STATEMENT_VERB.test(body)) return { cls: 'finding', score: 1 };
  return { cls: best ?? 'other', score: top };
}

/** A sentence that opens with a bare verb and its object: a step to take (see IMPERATIVE_OPENING, IMPERATIVE_PLURAL). */
function isInstruction(body: string): boolean {
  if (IMPERATIVE_OPENING.test(body)) return true;
  return IMPERATIVE_PLURAL.test(body) && !STATEMENT_VERB.test(body.split(PURPOSE_CLAUSE)[0]!.split(/\s+/).slice(2).join(' '));
}

/** A sentence that opens as the next step of a sequence and says what will be done in it. */
const SEQUENCED_STEP = /^(?:then|next|finally|afterwards|after that|subsequently|lastly),?\s+(?!(?:the\s+)?(?:root cause|cause|reason|issue|problem|error|bug)\b)[^.;:]*\b(?:will|'ll|is going to|are going to)\b/i;

/** A reference by number to a part of a document or a list: "Section 2.3", "steps 3 & 4.6". */
const NUMBERED_REFERENCE = /\b(?:sections?|steps?|parts?|phases?|chapters?|items?|options?|tables?|figures?|appendix)\s*\d+(?:\.\d+)*(?:\s*(?:&|and|,)\s*\d+(?:\.\d+)*)*/gi;

/** The tag an agent puts on one of the options it offers. */
const OPTION_TAG = /\((?:not )?(?:recommended|suggested|preferred)\)/i;

/** On equal weight, the class listed first wins: a failure over a finding, a decision over a change. */
const CUE_ORDER: readonly SentenceClass[] = ['failure', 'decision', 'finding', 'plan', 'change'];

/**
 * The class of one sentence said by `role`. `lead` is the heading or lead-in
 * the sentence stands under in its message ("Root cause:", "Next steps"), which
 * tips a plain statement toward its class.
 */
export function classifySentence(sentence: string, role: SpeakerRole, lead?: string): Classified {
  // A heading, or a line of a diff (an export's rendered patch), is not a statement.
  if (/^\s{0,3}#{1,6}\s/.test(sentence) || /^\+\s*[-*]\s|^[+-]\s{2,}|^\+(?=[^+\s])/.test(sentence)) return { cls: 'other', score: 0 };
  const text = cleanMarkdown(sentence).trim();
  if (text === '') return { cls: 'other', score: 0 };
  return role === 'user' ? classifyUser(text) : classifyAssistant(text, lead);
}

// ------------------------------------------------------------- sentences

/** Markdown and decoration removed, inline code kept: `**Problem:** x` → `Problem: x`. */
export function cleanMarkdown(text: string): string {
  // Most sentences hold no markdown at all: only their spaces change.
  if (!MARKDOWN_CHARS.test(text) && !LIST_MARKER.test(text)) return text.replace(/\s+/g, ' ').trim();
  return text
    .replace(/^\s{0,3}#{1,6}\s+/, '')
    .replace(/^\s*>\s?/, '')
    // A list marker, a checkbox, or both (`- [ ] Add the test`).
    .replace(/^\s*(?:(?:[-*+•]|\d+[.)])\s+)?(?:\[[ xX]\]\s+)?(?<=\s)/, '')
    // Emphasis marks, outside inline code and inside no identifier (`/pydicom__pydicom/`, `__init__.py` keep theirs).
    .replace(/(`[^`]*`)|\*\*/g, (m, code: string | undefined) => code ?? '')
    .replace(/(`[^`]*`)|(?<![\w/.])__(?=\S)([^_`]*?\S)__(?![\w/.])/g, (m, code: string | undefined, inner: string) => code ?? inner)
    .replace(/(`[^`]*`)|(^|\s)[*_]([^\s*_][^*_`]*[^\s*_])[*_](?=\s|[.,;:!?]|$)/g, (m, code: string | undefined, lead: string, inner: string) => code ?? `${lead}${inner}`)
    .replace(/^[\s\u{1F300}-\u{1FAFF}\u{2600}-\u{27BF}\u{2B50}\u{2705}\u{274C}\u{FE0F}]+(?=\S)/u, (m) => (/[✅❌⚠]/u.test(m) ? m.trim() + ' ' : ''))
    .replace(/\s+/g, ' ')
    .trim();
}

/** A character one of cleanMarkdown's rules needs (heading, quote, emphasis, bullet, checkbox, the emoji it strips). */
const MARKDOWN_CHARS = /[#>*_•[\u2600-\u27BF\u2B50\uFE0F\uD83C-\uD83E]/;
/** A list marker cleanMarkdown removes without any of MARKDOWN_CHARS: `- `, `+ `, `1. `, `2) `. */
const LIST_MARKER = /^\s*(?:[-+]|\d+[.)])\s/;

export interface Sentence {
  /** The sentence, markdown removed, inline code kept. */
  readonly text: string;
  /** Position of the sentence in its text (0-based). */
  readonly index: number;
  /** The heading or lead-in ("Root cause:", "## Next steps") the sentence stands under, if any. */
  readonly lead?: string;
  /** The sentence is a heading itself. */
  readonly heading?: boolean;
  /** The sentence is a list item (it may lean on its lead for meaning). */
  readonly item?: boolean;
  /**
   * For a list item: the sentence above the list that the item finishes ("The core issue appears to be that
   * when saving a profile, the code might be:"), colon removed. The item alone says half of it.
   */
  readonly intro?: string;
}

/**
 * A sentence that opens a list and needs it to be finished: it ends with a colon and is a statement of its
 * own making ("The problem is that:", "…the code might be:"), not a label ("Changes:"), the agent's narration
 * ("Let me check:") or an offer ("Would you like me to:").
 */
function introOf(sentence: string): string | undefined {
  if (!/[:：]$/.test(sentence)) return undefined;
  const body = sentence.replace(/[:：]$/, '').trim();
  // A short noun phrase that names what the items do ("The test:", "The new helper:"): they are its predicates.
  if (NAMING_INTRO.test(body)) return body;
  if (proseWords(body) < 4 || !/\b(?:is|are|was|were|be|that|because|since|means|seems?|appears?|might|may|could|would)\s*$|\b(?:is|are|was|were) (?:that|because)\b/i.test(body)) return undefined;
  // Declarative ("the cause is that:"), not an instruction ("Add proper switching logic that:").
  if (!/\b(?:is|are|was|were|be|seems?|appears?|means|because)\b/i.test(body)) return undefined;
  if (PROCESS_OPENING.test(body) || NARRATED_ACTION.test(body) || OFFER.test(body) || HELP_OPENING.test(body)) return undefined;
  return body;
}

/** A lead-in that names one thing and says nothing of it: "The test", "The new `pr` command", "This helper". */
const NAMING_INTRO = /^(?:the|this|that|our|my|your|its|each|every) (?:new |updated |fixed |added |final )?(?:`[^`\n]{1,60}`|[a-z]+)(?: (?:`[^`\n]{1,60}`|[a-z]+))?$/i;

/** Longest sentence considered; longer pieces are prose dumps or pasted text. */
const SENTENCE_MAX_CHARS = 600;
const SENTENCE_MIN_CHARS = 2;
// Also where an agent left out the space, or an export joined two text blocks without one ("…this third
// script.I will now use `curl`", "…will work!Lets try", "…responded to.The packet arrives", "…into `$file`.Let's
// test", "…an `open()` call!Instead of"): after a word of two letters or more or a closing backtick, before a word
// that opens sentences ("http.Client to" is a call). Never after an abbreviation that runs on ("IN-REVIEW vs. DONE",
// "e.g. Python").
const SENTENCE_BREAK =
  /(?<=[.!?])(?<!\b(?:[Vv]s|[Ee]\.g|[Ii]\.e|cf|approx|incl|ca)\.)\s+(?=[A-Z0-9`"'(\[*_✅❌])|(?<=[a-z][?!])\s+(?=[a-z])|(?<=(?:\b[a-z]{2,}|`)[.!?])(?=(?:I|The|This|That|These|It|We|Let|Lets|Let's|Now|So|Then|But|However|Another|Since|Also|Next|Finally|Here|There|Our|My|You|If|When|After|Before|On|In|As|Instead|Which|Because|Once|Unfortunately|Otherwise)\s)/;
/** Sentence punctuation inside inline code, masked while a line is split (`// AI! Write…` is one span, not two sentences). */
const MASKED: Readonly<Record<string, string>> = { '.': '\uE000', '!': '\uE001', '?': '\uE002' };
const UNMASKED: Readonly<Record<string, string>> = { '\uE000': '.', '\uE001': '!', '\uE002': '?' };

/** A line split at SENTENCE_BREAK, never inside an inline code span. */
function splitOutsideCode(line: string): string[] {
  if (!line.includes('`')) return line.split(SENTENCE_BREAK);
  const masked = line.replace(/`[^`\n]+`/g, (code) => code.replace(/[.!?]/g, (c) => MASKED[c]!));
  return masked.split(SENTENCE_BREAK).map((piece) => piece.replace(/[\uE000-\uE002]/g, (c) => UNMASKED[c]!));
}

/** Where fenced code longer than a short chain stood in a text. */
const CODE_BREAK = '\u0001';

/** A line that opens a patch: `diff --git`, a hunk header, the file headers. */
const DIFF_HEADER = /^(?:diff --git |@@ -\d|\+\+\+ [ab/]|--- (?:a\/|\/dev\/null)|index [0-9a-f]{7,}\.\.)/;
/** A line inside a patch: added, removed or context, or its bookkeeping. */
const DIFF_LINE = /^(?:[+\- ]|\\ No newline|new file mode|deleted file mode|similarity index|rename (?:from|to) |index [0-9a-f]{7,}|@@ |diff --git )|^$/;

/**
 * Text without the patches pasted into it unfenced (an exported terminal
 * showing `git diff`, an agent quoting a change): from a patch header, or from
 * two `+` lines in a row, every line of the patch is code, not prose.
 */
function withoutDiffs(text: string): string {
  if (!/^(?:diff --git |@@ -\d|\+)/m.test(text)) return text;
  const lines = text.split('\n');
  const out: string[] = [];
  let inDiff = false;
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!;
    if (!inDiff && (DIFF_HEADER.test(line) || (line.startsWith('+') && lines[i + 1]?.startsWith('+')))) inDiff = true;
    // A line a terminal wrapped ("ke sure the test fails." under a long `+` line) stays in the patch when it resumes.
    // So does one right before the patch's own bookkeeping ("\ No newline at end of file", the next file's header).
    else if (inDiff && !DIFF_LINE.test(line) && !lines.slice(i + 1, i + 4).some((next) => /^\+|^-(?! \S|-)|^\\ No newline/.test(next) || DIFF_HEADER.test(next))) inDiff = false;
    out.push(inDiff ? '' : line);
  }
  return out.join('\n');
}

/** A fence line: its backticks and the info string after them (`markdown`, `bash`, or none). */
const FENCE_LINE = /^\s{0,3}(`{3,})\s*([\w+#.-]*)\s*$/;

/**
 * Text without the markdown documents quoted in it whole (a rule file, a
 * README an agent wrote or shows in a ```markdown block): their headings and
 * bullets are the document's, not the agent's statements. Such a document
 * often holds fences of its own, which a plain pairing of fences turns inside
 * out, so its end is found by nesting: inside it, a fence with an info string
 * opens a nested block, a bare fence right under a heading or a line ending
 * with a colon opens one too, and any other bare fence closes the innermost
 * block. A document that never closes that way ends at the last fence that
 * brought it back to its own level. `placeholder` stands where one was.
 */
export function withoutMarkdownDocuments(text: string, placeholder = CODE_BREAK): string {
  if (!/^\s{0,3}```+\s*(?:markdown|md|mdc)\s*$/im.test(text)) return text;
  const lines = text.split('\n');
  const out: string[] = [];
  for (let i = 0; i < lines.length; i++) {
    const open = FENCE_LINE.exec(lines[i]!);
    if (!open || !/^(?:markdown|md|mdc)$/i.test(open[2]!)) {
      out.push(lines[i]!);
      continue;
    }
    let depth = 0;
    let end: number | undefined;
    let lastLevel: number | undefined;
    let previous = '';
    for (let j = i + 1; j < lines.length; j++) {
      const line = lines[j]!;
      const fence = FENCE_LINE.exec(line);
      if (fence) {
        if (fence[2] !== '' || (depth === 0 && (/^\s{0,3}#{1,6}\s/.test(previous) || /:\s*$/.test(previous)))) depth++;
        else if (depth === 0) {
          end = j;
          break;
        } else if (--depth === 0) lastLevel = j;
      }
      if (line.trim() !== '') previous = line;
    }
    end ??= lastLevel;
    if (end === undefined) {
      out.push(lines[i]!);
      continue;
    }
    const body = lines.slice(i + 1, end);
    // A short one (a line or three) is left to the plain pairing, which reads it with its sentence.
    if (body.filter((l) => l.trim()).length <= 3 && body.join('\n').length <= 240) out.push(...lines.slice(i, end + 1));
    else out.push(placeholder);
    i = end;
  }
  return out.join('\n');
}

/** A line that introduces what follows: a markdown heading, or a short line ending with a colon. */
function leadIn(line: string): string | undefined {
  const t = line.trim();
  if (/^#{1,6}\s+\S/.test(t)) return cleanMarkdown(t);
  const clean = cleanMarkdown(t);
  if (/[:：]$/.test(clean) && proseWords(clean) <= 10 && clean.length <= 120) return clean;
  return undefined;
}

/** Backticks on a line outside fenced code: an odd count leaves an inline code span open. */
function opensCode(line: string): boolean {
  return (line.match(/`/g)?.length ?? 0) % 2 === 1;
}

/**
 * Lines with an inline code span that a line break runs through ("instead of `# List all sessions…` ⏎
 * `minsky session list --json | jq …`, use …") joined into one: the sentence goes on after the code.
 */
function joinSplitCode(lines: string[]): string[] {
  const out: string[] = [];
  for (let i = 0; i < lines.length; i++) {
    let line = lines[i]!;
    while (opensCode(line) && i + 1 < lines.length && lines[i + 1]!.trim() !== '' && lines[i + 1] !== CODE_BREAK && opensCode(lines[i + 1]!)) line = `${line} ${lines[++i]!.trim()}`;
    out.push(line);
  }
  return out;
}

/**
 * Text with a line break where a log joined two blocks of a model's text with nothing between them ("…the accept rule
 * IS there for br-lanBut wait…", "…no errors)Now I have 392 findings…"): a sentence opener glued to the end of a word.
 * Code spans are left as they are.
 */
function unglued(text: string): string {
  return text.replace(/`[^`\n]*`|([a-z)\]])(?=(?:But|Let me|Let's|However|Hmm|Wait|Actually|Okay)[,.]* [A-Za-z]|Now,? (?:I|I'm|I'll|we|we're|let|let's|the|that|it|there)\b)/g, (m: string, end?: string) => (end ? `${end}\n` : m));
}

/**
 * Splits prose into sentences: at sentence punctuation before a capital, a
 * digit or a quote, at a question or exclamation mark after a word whatever
 * follows (users type "…seperate files? i feel like…"), and at line breaks;
 * fenced code longer than a short chain is left out; list markers and
 * markdown emphasis are removed. Each sentence
 * carries the heading or lead-in it stands under (a list under "Changes made:"
 * reports changes); a blank line before plain prose ends a lead-in's reach.
 */
export function sentencesOf(text: string): Sentence[] {
  const body = withoutDiffs(
    withoutMarkdownDocuments(text).replace(/```[^\n]*\n([\s\S]*?)```/g, (_, code: string) =>
      // A short code block (a chain, a value) reads as part of the sentence; longer ones are code.
      code.length <= 240 && code.split('\n').filter((l) => l.trim()).length <= 3 ? ` \`${code.trim().replace(/\s+/g, ' ')}\` ` : `\n${CODE_BREAK}\n`,
    ),
  );
  const out: Sentence[] = [];
  let headingLead: string | undefined;
  let colonLead: string | undefined;
  let intro: string | undefined;
  let introIndent = -1;
  let blank = false;
  for (const line of joinSplitCode(unglued(body).split('\n'))) {
    if (line === CODE_BREAK) {
      // A block of code between a sentence and a list: the list no longer finishes the sentence.
      intro = undefined;
      blank = true;
      continue;
    }
    if (line.trim() === '') {
      blank = true;
      continue;
    }
    const heading = /^\s{0,3}#{1,6}\s/.test(line);
    const isList = /^\s*(?:[-*+•]|\d+[.)]|\[[ xX]\])\s/.test(line) || /^\s{2,}\S/.test(line);
    // A lead-in reaches its list and the lines right under it; a new paragraph of prose ends it.
    // A heading reaches its whole section; a lead-in ending with a colon only its list and the lines right under it.
    if (blank && !isList && !heading) colonLead = undefined;
    const lead = colonLead ?? headingLead;
    // The sentence a list finishes reaches that list only: not prose after it, not the next item of its own level.
    const indent = /^\s*/.exec(line)![0].length;
    // Only a marked item finishes the sentence: an indented line (a stack frame) is no item of it.
    const marked = /^\s*(?:[-*+•]|\d+[.)]|[a-z][.)]|\[[ xX]\])\s/.test(line);
    if (!marked || indent <= introIndent) intro = undefined;
    const afterBlank = blank;
    blank = false;
    const introduces = leadIn(line);
    let last: string | undefined;
    // The list marker goes first: "1. Taking the state" is one sentence, not "1." and another.
    // A numbered heading ("## 1. Semantic Overlays") is one heading, not "1." and another.
    for (const piece of splitOutsideCode(line.replace(/^(\s{0,3}#{1,6}\s+)\d+[.)]\s+(?=\S)/, '$1').replace(/^(\s*)(?:\d+[.)]|[a-z][.)])\s+(?=\S)/, '$1- '))) {
      let sentence = cleanMarkdown(piece);
      if (sentence.length < SENTENCE_MIN_CHARS || sentence.length > SENTENCE_MAX_CHARS || /^[-=*_|:#\s]+$/.test(sentence)) continue;
      // A sentence a short code block interrupted goes on after it ("The output you quoted:" `- #1: Task [TODO]`
      // "suggests that the parser …"): one sentence again, its subject included.
      const quoted = out[out.length - 1];
      let own = lead;
      if (!afterBlank && /^[a-z]+s\b/.test(sentence) && quoted !== undefined && /^`[^`]+`$/.test(quoted.text)) {
        const opening = out[out.length - 2];
        const whole = opening !== undefined && quoted.lead === opening.text;
        out.splice(whole ? -2 : -1);
        sentence = `${whole ? `${opening.text} ` : ''}${quoted.text} ${sentence}`;
        own = whole ? opening.lead : quoted.lead;
      }
      last = sentence;
      out.push({
        text: sentence,
        index: out.length,
        ...(own !== undefined ? { lead: own } : {}),
        ...(heading ? { heading: true } : {}),
        ...(isList ? { item: true } : {}),
        ...(isList && intro !== undefined ? { intro } : {}),
      });
    }
    if (heading) {
      headingLead = introduces;
      colonLead = undefined;
    } else if (introduces !== undefined) colonLead = introduces;
    if (!heading && last !== undefined && /[:：]$/.test(last)) {
      intro = introOf(last);
      introIndent = isList ? indent : -1;
    }
  }
  return out;
}
