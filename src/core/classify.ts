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

export const SENTENCE_CLASSES = ['ask', 'rule', 'finding', 'decision', 'failure', 'plan', 'change', 'process', 'pleasantry', 'other'] as const;
export type SentenceClass = (typeof SENTENCE_CLASSES)[number];

/** Classes whose sentences may carry a fact the summary keeps. */
export const CONTENT_CLASSES: ReadonlySet<SentenceClass> = new Set(['ask', 'rule', 'finding', 'decision', 'failure', 'plan', 'change']);

export type SpeakerRole = 'user' | 'assistant';

export interface Cue {
  readonly cls: SentenceClass;
  readonly pattern: RegExp;
  readonly weight: number;
  /** Only sentences of this speaker. */
  readonly role?: SpeakerRole;
}

export interface Classified {
  readonly cls: SentenceClass;
  /** Total weight of the winning class (0 for a default). */
  readonly score: number;
}

// ----------------------------------------------------------------- openings

/** Agent narration of its own next step: decides "process" before anything else is read. */
const PROCESS_OPENING =
  /^(?:(?:ok(?:ay)?|alright|all right|so|now|first|next|then|great|perfect|good|excellent)[,!.]?\s+)*(?:let me|let's (?!go with\b|use\b|call\b|name\b|keep\b|stick\b|switch\b|stay\b|not\b)[\w-]+|now,? let's|i'll (?:check|look|read|search|examine|start|first|run|verify|investigate|explore|review|inspect|find|open|take|get|begin|now|also|go ahead|proceed|continue|do|try|test|see|help|create|update|add|fix|make|write|implement|modify|apply|edit|change|remove|delete|install|set up|setup|commit|push|move|rename|clean|use the|use a tool|summarize|provide|analy[sz]e)|i will (?:check|look|read|search|examine|start|first|run|verify|investigate|explore|review|inspect|find|open|now|also|proceed|continue|create|update|add|fix|make|write|implement|modify|help|try|use the)|i need to (?:check|look|read|see|find|examine|verify|understand|investigate|explore|review|first|update|create|add|fix|make|write|implement|modify|run|get|re-?examine|re-?check|re-?run|re-?read|double[- ]check|dig|figure out|carefully)|we can use (?:the )?`[^`]+` (?:command|tool|utility) to|i should (?:check|look|read|see|find|examine|verify|first)|i'm going to|i am going to|i'm now|i am now (?:going|checking|looking|reading)|i can see|i see (?:that |the |a |it |there |now)|i notice|i'll now|looking at|checking|reading|searching|running|examining|exploring|investigating|reviewing|inspecting|now i (?:need|have|can|see|will|'ll|'m|am)|the user (?:wants|is asking|asked|has asked|wants me|would like|is requesting|requested|needs|is)|user wants|we need to (?:check|look|see|find|first|examine|verify|understand)|to (?:do|start|begin) (?:this|that)|time to|moving on|we see (?:that|the|a)|i(?:'m| am) (?:now |also |currently |still )?(?:\w+ing)\b|currently,? i(?:'m| am)|my (?:goal|next move|aim|plan) is to (?:understand|check|look|see|run|find|examine)|now that (?:i|we|the|everything)[^,]*,\s*(?:let's|let me|i'll|we can|we'll|i will|we should)|(?:first|next|then),? (?:we|i) (?:should|need to|will|'ll|can) (?:find|look|check|see|open|search|navigate|locate|list|read|run|examine|create)|we (?:should|can|will|'ll) (?:navigate|find|look|check|open|search|locate|list|read|run|examine|create a new file|create a script|start by)|let's use (?:the )?(?:`[^`]+`|\w+_\w+|find_file|search_\w+|curl|grep|ls|cat|find)|calling `|marking (?:the )?(?:remaining )?todos?|sprawdźmy|sprawdzę|zobaczmy|teraz sprawdź|widzę|давай(?:те)?|посмотрим|проверим|сейчас (?:я )?(?:посмотрю|проверю))/i;

/** A greeting, thanks, praise or apology at the start; the rest of the sentence may still carry content. */
const PLEASANTRY_OPENING =
  /^(?:great|perfect|excellent|awesome|nice|good|wonderful|fantastic|amazing|brilliant|cool|thanks|thank you|thx|sorry|apologies|you're (?:absolutely )?right|you are (?:absolutely )?right|absolutely|sure|of course|certainly|got it|understood|hi|hello|hey|yes|yep|ok(?:ay)?|alright|excellent progress|good (?:catch|point|question|progress|news)|we're making progress|making progress|good progress)\b[\s!.,:;—–-]*/i;

/**
 * The agent announcing its own next action or reporting that it looked:
 * "Okay, I will refactor…", "I've reviewed your file", "Ok, I have the
 * content of…", "Here are the blocks…", "Please add X to the chat".
 */
const NARRATED_ACTION =
  /^(?:(?:ok(?:ay)?|alright|so|now|sure|right|understood|first|next|then)[,!.]?\s+)*(?:(?:i|we)(?:'ll| will| am going to|'m going to| are going to|'re going to) (?!use\b|go with\b|switch\b|keep\b|store\b|avoid\b|need\b|call it\b|name\b)\w+|i should (?:ask|follow|provide|note|mention|start|focus|make sure|keep|also|now|strictly|first)|i(?:'ve| have) (?:reviewed|read|looked|checked|examined|analy[sz]ed|gone through|got|received|the content|the contents|now (?:reviewed|read|got|have))|i have (?:the|your) |here (?:are|is) (?:the|a|an|my|your|some)\b|please (?:add|share|provide|paste|send|run|confirm|let me)|(?:below|above) (?:are|is) (?:the|a)\b)/i;

/**
 * An opening that only says the agent looked ("I see", "I notice that",
 * "Looking at the code,", "After checking the logs,"): the rest of the
 * sentence is what it found.
 */
const OBSERVED =
  /^(?:(?:ok(?:ay)?|now|so|and)[,]?\s+)?(?:i (?:can |now )?see(?: now)?(?: that)?|i (?:notice|noticed)(?: that)?|i (?:have )?(?:found|discovered|realized|realised)(?: that)?|(?:looking|having looked) (?:at|through|into) [^,]{1,80},|(?:after |upon )?(?:checking|reviewing|examining|reading|inspecting|investigating) [^,]{1,80},)\s+/i;

/** The agent about to look at something ("Let me check…", "I'll first verify…"). */
const LOOK_NARRATION =
  /^(?:(?:ok(?:ay)?|now|first|next|then|so)[,]?\s+)?(?:let me|let's|i'll|i will|i need to|we need to|i should|we should)\s+(?:first\s+|now\s+|also\s+)?(?:check|see|verify|look|investigate|confirm|find out|test|examine|inspect|review|read|search|explore|list)\b/i;

/** The agent committing to an action of its own (not a look at something): with a reason it is a choice. */
const CHOSEN_ACTION =
  /^(?:(?:ok(?:ay)?|so|now|first|then)[,]?\s+)*(?:i|we)(?:'ll| will| need to| have to| must| should|'m going to| am going to)(?: \w+ly)? (?:create|write|implement|use|switch|change|modify|add|remove|drop|fix|update|move|rename|delete|keep|skip|avoid|do|build|set up|install|replace|revert|disable|enable|restructure|rewrite|split|merge|handle)\b/i;

/** The agent offering its help with what the user asked: a restatement of the request. */
const HELP_OPENING = /^(?:(?:ok(?:ay)?|sure|alright|great)[,!.]?\s+)*(?:i(?:'ll| will| can|'d be happy to) help(?: you)?|i(?:'ll| will) (?:help|assist))\b/i;

/**
 * "instead of" in a description of what something does ("Your hook is using the
 * old script instead of the new one", "it seems to have listed the tags instead
 * of switching"): what was found, not a choice.
 */
const DESCRIBED_INSTEAD = /^(?!(?:i|we|let's|let me|you)\b)(?:[^.!?]|\.(?=\w))*\b(?:is|are|was|were|'s|'re|seems? to(?: have)?|appears? to(?: have)?) (?:still |just |now |actually |only )?\w+(?:ing|ed)\b[^.]*\b(?:instead of|rather than)\b/i;

/** A lead-in to what follows ("To improve the file, we can make the following changes", "Here's how:"): no statement of its own. */
const LEAD_IN = /\b(?:the following(?: \w+){0,3}|as follows|below|these (?:changes|steps|files|commands))\s*:?\s*$|^to \w+[^,]{0,120}, (?:we|i|you|let's) (?:can|need to|will|should|must|'ll)\b[^.]*(?::|\bneed to)?\s*$|^(?:here(?:'s| is| are)|this is) (?:how|what|why|the plan)\b/i;

/**
 * A connective that opens a sentence ("Specifically,", "However,", "Also,"): it
 * links the sentence to the one before and says nothing itself, so what
 * follows it is classified ("Specifically, I'm focusing on…" is narration).
 * "Instead," stays: it marks a choice.
 */
const DISCOURSE_OPENING =
  /^(?:(?:specifically|further(?:more)?|additionally|also|however|moreover|in addition|meanwhile|besides|similarly|likewise|notably|importantly|interestingly|actually|basically|essentially|ultimately|at this point|so far|lastly)(?:,\s*|\s+(?=i\b|we\b|let\b|the\b|this\b|it\b|there\b))|(?:and|but|plus),\s*)+/i;

/** Celebration and self-praise: "now production-ready 🎉", "works perfectly!". */
const FLUFF = /[🎉🚀✨🥳💪]|\b(?:production-ready|perfectly|flawlessly|like a charm|great job|well done|masterpiece)\b.*!?$/u;

/** Narration behind a lead clause: "Based on the spec, I'll start…", "Then re-applying the changes". */
const NARRATED_AFTER = /^(?:based on|given|with|after|now that|since|if so|if (?:that|this|it) (?:works|fails|passes)|to \w+)\b[^,]{0,120},\s*(?:i(?:'ll| will|'m| am| understand| now understand)|let me|let's|we(?:'ll| will| can| should))\b|^(?:then|next|now|first|finally),?\s+[\w-]+ing\b/i;

/**
 * Narration of the agent's own work in progress or of its next move, wherever
 * it stands: "…, so we can just run `reproduce.py` directly", "my current
 * focus is…", "a fresh `cargo test` run is in progress", "the agents are still
 * working", "this will help us see if…", "Maybe there's a connectivity issue".
 */
const NARRATION =
  /(?:,|;|\bso|\band)\s+(?:now\s+)?(?:we|i)(?:'ll| will| can| could| should| need to| must| want to| are going to|'re going to| am going to|'m going to)(?: now| just| also| then| first| simply)? (?:run|try|check|submit|use|look|see|proceed|continue|test|print|list|open|create|verify|examine|inspect|read|search|find|investigate|attempt|start|begin|move on|focus)\b|^(?:my|our) (?:current |initial |immediate |main |primary |new )?(?:focus|attention|next step|next move|priority|thinking|thought process|process)\b|^(?:(?:my|our) (?:current |initial |immediate |main |primary |new |revised )?(?:plan|intention|aim|goal) (?:now |here )?is|(?:(?:then|now|next|first|so),?\s+)?(?:i|we)(?:'m| am|'re| are)? (?:now )?(?:plan(?:ning)?|intend(?:ing)?|aim(?:ing)?|going) to) (?:first )?(?:list|check|look|confirm|run|re-?run|read|inspect|examine|review|see|verify|investigate|explore|find|search|understand|analy[sz]e|test|gather|scan|trace|debug|diagnose|figure)\b|^if (?:it|this|that|so|not|the \w+) (?:still )?(?:fails|doesn't work|does not work|breaks|errors|succeeds|works|passes)\b|^the (?:goal|aim|objective|idea) (?:here |now )?is to\b|^(?:this|the|that|our|my) (?:script|test|command|snippet|code|run|check) (?:will|should|is going to) (?:attempt|try|check|verify|test|reproduce|run|print|help|confirm|show)\b|\b(?:is|are) (?:still )?(?:in progress|underway|running in the background)\b|\b(?:is|are) (?:still (?:actively )?|actively )(?:working|progressing|chugging)\b|\b(?:is|are) (?:still )?(?:working|progressing) on\b|^(?:maybe|perhaps|possibly)\b|^(?:this|that|it) (?:will|should|would|might|may) (?:help|allow|let) (?:us|me)\b|^i(?:'m| am) (?:(?:now|also|currently|still|just) ){0,2}(?:focused|ready|about to|keen|eager|curious|unsure|uncertain|considering|wondering|leaning|trying|thinking|planning|hoping|gearing up)\b|^i (?:realized|realised) i\b|^i(?:'ve| have) (?:just )?(?:reached|finished|completed|wrapped up) (?:the |my )(?:end|analysis|review|investigation|internal)/i;

/** A gerund that reports the agent at work ("Building…", "Reviewing…"), not what it changed ("Adding…", "Keeping…"). */
const PROGRESS_GERUND = /^(?:building|working|looking|checking|reviewing|investigating|exploring|examining|analy[sz]ing|reading|searching|running|testing|verifying|trying|preparing|starting|continuing|finishing|waiting|thinking|considering|planning|figuring|digging|scanning|inspecting|evaluating|assessing|debugging|diagnosing|confirming|double-checking|gathering|collecting|drafting|iterating|processing|parsing|loading|fetching|retrying|proceeding)\b/i;

/** A sentence opening with the gerund of the agent's own work, no subject ("Fixing…", "Also updating…"). */
const WORK_GERUND = /^(?:(?:also|now|still|then|next|first|finally|and)[,]?\s+)?(?!(?:nothing|something|everything|anything|string|thing|during|interesting|amazing|exciting|missing|existing|remaining|following|pending|outstanding|surprising|confusing|concerning|annoying|promising|according|morning|evening|spring|ring|king|ping|pricing|padding|logging|caching|routing|building|setting|settings|testing|mapping|encoding|naming|timing|spacing|styling|tracking|typing|warning|error)\b)[a-z]{3,}ing\b/i;
/** A finite verb after an opening gerund makes it the subject ("Using a map avoids the scan"); participles do not ("the unused variable"). */
const GERUND_FINITE = /\b(?:is|are|was|were|has|have|had|does|did|do|can|cannot|will|would|should|could|may|might|must|seems?|appears?|means|requires|returns|causes|fails|works|contains|uses|needs|breaks|avoids|prevents|makes|keeps|lets|gives|takes|helps)\b/i;
/** A title ("Clarifying Dependencies and Order"): every word of three letters or more capitalised. */
const TITLE_CASE = /^(?:[A-Z][\w'-]*|[a-z]{1,3}|&)(?:\s+(?:[A-Z][\w'-]*|[a-z]{1,3}|&))+$/;
/** Where the main clause of a sentence ends: its reason or contrast. */
const GERUND_CLAUSE_END = /,|;|\s[—–-]\s|\b(?:since|because|so that|rather than|instead of|to avoid|as)\b/i;

/** What the agent expects a change to do, before it is seen to: "This should fix the error", "After these changes, the error should be resolved". */
const EXPECTATION = /^(?:you (?:should|will) (?:now )?(?:see|be able|notice|get|find)\b|(?:this|that|it|these (?:changes|fixes|updates)|the (?:fix|change|update|new \w+)s?)\s+should\b|after (?:making |applying )?(?:these|this|the) (?:changes?|fix(?:es)?|updates?)\b[^,]*,\s*(?:the \w+ |it |this |everything )?should\b|(?:this|that|it) (?:should|will) (?:now )?(?:fix|resolve|solve|address|correct|handle|work|make)\b)/i;


/**
 * A coding tool asking the user for files (aider: "the files most likely to need changes are: …", "please add
 * them to the chat"): a request for context, no statement about the code.
 */
const FILE_REQUEST = /\bmost likely to need (?:changes|changing|to (?:be )?(?:edited|changed|modified)) (?:are|is)\s*:|\badd (?:these|those|them|the (?:\w+ )?files?)(?: \w+){0,3} to the chat\b/i;

/**
 * The agent's reasoning about the conversation itself: what the user said or added ("User says: …", "Now they've
 * added `index.ts`"), what it will say back ("I need to ask them for the files", "Explain that it is an index
 * file"), the context it recalls ("Context: we're discussing…"). The user's own words and the files are in the record.
 */
const CONVERSATION_NARRATION =
  /^(?:(?:so|now|ok(?:ay)?|and)[,]?\s+)?(?:(?:the )?user (?:says|said|asks|asked|wants|wanted|has added|added|is asking|is requesting|mentioned|previously|just|now|seems to want|requests?|provided|has provided|shared|has shared|wants me|replied|responded|is saying)\b|they(?:'ve| have)? (?:say|said|ask|asked|want|added|provided|shared|mention(?:ed)?|are asking|replied)\b|they ask me\b|i (?:need|should|have|want|must) to (?:ask|tell|explain|respond|reply|acknowledge|let (?:them|the user) know|request|point out)\b|i(?:'ll| will) (?:keep it|ask (?:them|the user|for)|respond|reply|explain|acknowledge|let (?:them|the user) know)\b|i previously (?:suggested|asked|said|mentioned|explained)\b|explain (?:that|why|to the user)\b|(?:the )?context(?: from [^:]{0,40})?:\s|this is (?:just )?(?:a|an) (?:greeting|request for|follow-?up|simple question|acknowledg))/i;

/** The agent weighing the user's idea before restating it ("This is an interesting approach - rather than…"): the request says it. */
const REQUEST_ECHO = /^(?:(?:this|that|it) (?:is|sounds like|seems like|'s) (?:an? |a really |a very )?(?:interesting|good|great|nice|clever|solid|reasonable|smart|excellent|sensible|neat) (?:approach|idea|plan|request|suggestion|change)\b)/i;

/** A whole sentence of courtesy: thanks, apology, acknowledgement. */
const PLEASANTRY_SENTENCE = /^(?:(?:i )?apologi[sz]e\b|(?:you're|you are) (?:welcome|correct|right)\b|thank you for\b|thanks for\b|my apologies\b|i'm sorry\b|sorry (?:about|for)\b|good (?:catch|point|idea|question)\b|that's (?:a )?(?:great|good|fair) (?:point|question|idea)\b|we're making (?:good )?progress|(?:great|good|excellent) progress|your [^.!?]{1,60}?\b(?:is|are|looks?) (?:\w+ly )?(?:well[- ](?:designed|structured|organi[sz]ed|written|architected|documented|thought[- ]out)|excellent|impressive|great|superb|outstanding|professional)\b)/i;

/** "You're absolutely right - I've been editing the main workspace…", "I apologize, …": the agent conceding the user's point. */
const CONCEDING = /^(?:(?:you(?:'re| are) (?:absolutely |completely |totally |quite )?(?:right|correct))|(?:i )?apologi[sz]e|my apologies|sorry,|good catch)\b/i;

/** Offers and questions to the user: not a fact. */
const OFFER = /^(?:(?:now,? )?(?:when|if|once) you (?!need\b)|would you like|do you want|shall i|should i|want me to|let me know|if you(?:'d| would)? like|feel free|is there anything|can i help|would it help|i can (?:also )?(?:help|do|add|create|make)|i'd be happy|happy to help|hope this helps|i'll help you|i will help you|i can help)|\b(?:please )?let me know\b|\bif you(?:'re| are) still (?:seeing|encountering|having|getting)\b/i;

// ------------------------------------------------------------------- rules

/** Discourse markers a rule may open with ("Also, never…", "From now on, always…"). */
const RULE_LEAD = /^(?:(?:and|but|also|so|then|plus|oh and|btw|by the way|ps|p\.s\.|note|important|remember|reminder|please|pls|just|and also|one more thing|from now on|going forward|in (?:the )?future|for (?:this|the rest of this) (?:project|session|task|repo)|as a rule|in general|always remember|constraints?|rules?|requirements?)[,:;—–-]?\s+)+/i;

/** A prescriptive opening addressed to the agent. */
const RULE_IMPERATIVE =
  /^(?:never|always|do not|don't|dont|do NOT|must|make sure|ensure|be sure to|remember to|only|avoid|keep|use only|no more|no |stop|refrain from|under no circumstances|without|preserve|retain|maintain|respect|stick to|leave \S+ (?:alone|as is|unchanged|intact)|limit|restrict|prefer|ask (?:me )?before|check with me before|confirm (?:with me )?before|wait for (?:my|me)|don't touch|do not touch|no need to)\b/i;

/** A modal or prohibition addressed to the agent anywhere in the sentence. */
const RULE_MODAL =
  /\b(?:you|we|it|they|the \w+|claude|agent) (?:must|must not|mustn't|should never|should always|shall not|may not|are not allowed to|is not allowed to|need to always|have to always)\b|\byou (?:do not|don't|never|will not|won't|should not|shouldn't|may only|can only|are only|only)\b|\bi (?:do not|don't|dont) (?:want|wish)\b|(?<!\b(?:i|we|it|this|that)(?:'ve| have| had)? )\b(?:always|never)\b(?! (?:\w+ed|worked|works|fails|failed|seen|had|been|gotten|got|saw|heard|found|came|went|ran|took|gave|made|knew|thought|did)\b)|\b(?:must never|must always|must not|not allowed|forbidden|prohibited|under no circumstances)\b|\bi (?:do not|don't) want (?:you|it) to\b|\bi want you to (?:always|never|only)\b|\b(?:from now on|going forward)\b|\b(?:without (?:asking|changing|modifying|touching|breaking|removing|deleting))\b/i;

/** A first-person report or a question that merely contains "don't" or "only" is not a rule. */
const NOT_A_RULE = /^no \w+(?: \w+)? (?:found|available|matches?|matching|results?|such|errors?|issues?|changes?|output|data|response|problems?|longer|more (?:than|results))\b|^(?:i|we)(?: still| just| really)? (?:don't|do not|can't|cannot|didn't|did not|haven't|only)\b(?! want (?:you|it) to| wish\b)|^(?:only|just) (?:\w+ ){0,2}(?:works?|worked|happens?|fails?)\b|^keep (?:going|working|it up|at it)\b|^no(?:pe)?[,.!]?$|^no,? (?:that|this|it)'?s?\b/i;

/**
 * A prescriptive clause inside a sentence, after a comma or "and/but/then": "implement it, ensure to lint the code",
 * "run them in order, but only one at a time", "When editing a file, make sure to indent". Not in a report of what
 * the user or something else did ("I tried it, and never got an answer").
 */
const RULE_CLAUSE = /(?:[,;:—–]\s*|\s(?:and|but|then)\s+)(?:please\s+|also\s+|just\s+)?(?:make sure|be sure to|ensure(?: to| that)?|always|never|do not|don't|only (?!to\b|if\b|when\b|after\b|because\b)\w+ (?:\w+ )?(?:at a time|one|once)\b)\b/i;
const REPORT = /^(?:i|we|it|this|that|there|they|he|she)\b(?! (?:want|need|would like) (?:you|it) to\b)/i;

/**
 * The user correcting what the agent does ("you're editing in the main workspace", "you keep adding comments",
 * "you should be in the session repo"): a standing rule said as a reproach, as binding as "don't".
 */
const RULE_CORRECTION =
  /^(?:(?:no|nope|again|but|still|wait|hey)[,!.]?\s+)?(?:you(?:'re| are)(?: still| again| now| actually)? (?!(?:right|correct|welcome|absolutely|so|quite|totally|exactly|spot|going to|about to|an?|the|my|our|doing (?:great|good|well|fine)|getting (?:there|close)|almost)\b)(?:\w+ing|in|not|on|inside|outside)\b|you(?:'ve| have) been \w+ing\b|you keep \w+ing\b|you should(?:n't| not)? (?:be|have been|stay|work|edit|use|run|keep)\b)/i;

/**
 * How a user sentence states a standing rule (verbatim prescriptive wording): as a whole ("Never commit without
 * signing."), or in a clause of a sentence that also asks for something ("run them in order, but only one at a time").
 */
export function ruleKind(sentence: string): 'whole' | 'clause' | undefined {
  const s = sentence.trim();
  if (s.endsWith('?')) return undefined;
  const body = s.replace(RULE_LEAD, '');
  if (NOT_A_RULE.test(body)) return undefined;
  if (RULE_IMPERATIVE.test(body) || RULE_MODAL.test(s) || RULE_CORRECTION.test(s)) return 'whole';
  return RULE_CLAUSE.test(s) && !REPORT.test(body) ? 'clause' : undefined;
}

/** Whether a user sentence states a standing rule, as a whole or in a clause. */
export function isRuleSentence(sentence: string): boolean {
  return ruleKind(sentence) !== undefined;
}

// -------------------------------------------------------------- agent cues

/** A choice said in so many words: the one list the sentence classes and the protected decisions (state.ts) share. */
export const CHOICE_CUE = /\b(?:I'll use|I will use|we'll use|let's use|let's go with|going with|decided to|switch(?:ing)? to|instead of|opt(?:ing)? for|I chose|we chose)\b/i;

const AGENT_CUES: readonly Cue[] = [
  // findings: a discovered truth
  { cls: 'finding', weight: 3.5, pattern: DESCRIBED_INSTEAD },
  { cls: 'finding', weight: 3, pattern: /\b(?:root cause|the (?:real |actual |main |underlying |core |key |root |primary )?(?:issue|problem|bug|cause|culprit|reason) (?:is|was|here is|seems to be|appears to be)|turns out|it turns out|is caused by|was caused by|caused by|this (?:means|explains|confirms|shows)|which (?:means|explains)|the reason (?:is|was|why)|i (?:found|discovered|confirmed|noticed|determined|verified) (?:that|the|a|it)|found (?:that|the issue|the problem)|confirmed (?:that|it)|(?:this|that) is (?:why|because))\b/i },
  { cls: 'finding', weight: 2, pattern: /\b(?:does(?:n't| not) support|is(?:n't| not) supported|not supported|only supports|requires|depends on|is set to|are set to|is configured|defaults to|is (?:missing|absent|empty|null|undefined|hardcoded|hard-coded)|are missing|(?:does(?:n't| not)|do(?:n't| not)) exist|is(?:n't| not) (?:installed|running|listening|available|reachable|set|defined|exported|called|used)|listens on|points to|resolves to|returns|expects|overrides|conflicts with|is (?:still )?(?:correct|working|fine|valid|up to date)|works (?:correctly|fine|as expected)|are (?:now )?(?:passing|failing)|pass(?:es|ed)?(?: successfully)?:|because|due to|since the|so the)\b/i },
  { cls: 'finding', weight: 1.5, pattern: /\b\d+(?:\.\d+)?\s*(?:tests?|passed|passing|failed|failures?|errors?|warnings?|files?|lines?|records?|entries|items|commits?|ms|s|sec|seconds?|minutes?|mb|kb|gb|%|bytes?|tokens?|queries|requests|packets?|hosts?)\b|\bv?\d+\.\d+(?:\.\d+)?\b|\b(?:version|port|exit code|status code|http) \d+/i },
  { cls: 'finding', weight: 1, pattern: /`[^`\n]{2,80}`[^.]*\b(?:is|are|was|were|has|have|uses|contains|stores|calls|reads|writes|drops|ignores|runs|causes|returns|means|requires|listens|points|fails|breaks|blocks|overrides|conflicts|lacks|handles|creates|checks|expects|generates|produces|shows|defines|accepts)\b|\b(?:is|are|was|were|has|uses|contains|stores|lacks)\b[^.]*`[^`\n]{2,80}`/i },
  // An agent's own label on its line says what the line is ("Finding: …", "Root cause: …").
  // A label alone ("Root Cause:" over a list) states nothing: its items do.
  { cls: 'finding', weight: 4, pattern: /^(?:root cause|cause|problem|issue|finding|findings|result|results|diagnosis|observation|key (?:finding|insight)|analysis)\s*:\s*\S/i },
  { cls: 'finding', weight: 1, pattern: /^(?:status|the fix works|verified|confirmed)\s*:/i },
  // failures: what did not work
  { cls: 'failure', weight: 3, pattern: /\b(?:didn't work|did not work|doesn't work|does not work|won't work|will not work|isn't working|is not working|not working|still (?:fails|failing|broken|getting|seeing|doesn't|does not|not|the same|shows|returns|times out|hangs)|no luck|that (?:failed|broke)|(?:this|that|it) (?:failed|broke)|gave up|giving up|abandon(?:ed|ing)?|dead end|ruled out|not the (?:issue|cause|problem)|reverted?|rolling back|rolled back|doesn't seem to (?:work|help|fix)|didn't (?:help|fix|change)|did not (?:help|fix|change)|made (?:it|things) worse|(?:seems|appears) (?:to be|there (?:was|is|are)|that there (?:was|is)) (?:an? |some |still )?(?:issue|problem|mistake|error|bug|something wrong)|something (?:is |went )?wrong|(?:issues?|errors?|problems?) (?:that need|to be fixed|remain)|test failures|(?:in|into) the wrong (?:directory|workspace|place|file)|getting in the way|(?:i'm|i am|we're|we are) (?:encountering|running into|hitting|seeing) (?:an? |the |some |this )?(?:issue|problem|error|bug)|still (?:fork|permission|auth|connection|timeout|import|type|build|test) errors?)\b/i },
  { cls: 'failure', weight: 2, pattern: /\b(?:(?:command|build|test|tests|install|installation|push|commit|request|query|connection|edit|attempt|import|upload|migration|deploy(?:ment)?|script|compilation|it|this|that) (?:failed|fails|is failing|timed out|times out|crashed|hangs|was (?:rejected|blocked|refused|denied))|(?:couldn't|could not|can't|cannot|unable to|was unable to) (?:find|connect|start|open|read|write|load|resolve|import|install|build|run|access|sign|push|commit|bind|create|parse)|(?:got|getting|hit|hitting|returns?|returned|throws?|threw|raised?) (?:an? |the |this |same |another )?(?:error|exception|\d{3})|timed out|permission denied|access denied|syntax error|no such file)\b/i },
  { cls: 'failure', weight: 1, pattern: /\b(?:failed|fails|failing|failure|not found|refused|crash(?:es|ed)?|broken|exception|traceback|segfault|stuck|blocked)\b/i },
  { cls: 'failure', weight: 1, pattern: /^(?:❌|⚠️?|✗|error\b|warning\b|failed\b|failure\b)/i },
  // decisions: a choice made
  { cls: 'decision', weight: 3, pattern: new RegExp(`${CHOICE_CUE.source}|^(?:my|our) (?:\\w+ )?(?:plan|intention) (?:now |here )?is to\\b|\\b(?:we will use|go with|decided on|decision:|chose to|opt(?:ed|ing)? (?:for|to)|the (?:best |right |better |simplest |cleanest |correct )?(?:approach|solution|plan|fix|strategy|option) (?:is|will be|here is|would be)|the plan is to|better (?:approach|option|to)|best (?:approach|option|practice|way)|recommend(?:ed|ation)?:?|prefer(?:red|ence|abl[ey])?\\b|switched to|rather than|in favou?r of|let's call it|we'll call it|we'll name|will be (?:stored|kept|named|called|handled|used|moved|placed)|should be (?:stored|kept|named|called|handled|moved|placed)|solution:|fix:|approach:|strategy:|decision\\b)`, 'i') },
  { cls: 'decision', weight: 1.5, pattern: /\b(?:we(?: should| will|'ll| can) (?:use|store|keep|move|add|switch|replace|rename|extract|change|implement|make|create|split|merge|drop|remove|avoid)|i(?:'ll| will) (?:use|store|keep|switch|replace|rename|extract|split|merge|drop|avoid)|(?:will|would) (?:be better|work better|be simpler|be cleaner)|so that|to avoid|to prevent|to ensure|which (?:avoids|prevents|ensures|keeps))\b/i },
  { cls: 'decision', weight: 1.5, pattern: /^(?!(?:i|we|let's|let me|you)\b)[^.?!]{0,80}\b(?:will|shall) (?:be (?:\w+ed|moved|kept|set|made)|expose|inject|wire|embed|store|keep|preserve|handle|use|call|register|reject|accept|return|wrap|delegate|replace|own)\b/i },
  { cls: 'decision', weight: 1.5, pattern: /\b(?:we|i) need to (?:modify|change|amend|rewrite|replace|switch|move|use|exclude|restructure|bypass|skip|disable|enable)\b|\b(?:is|are|seems|looks) (?:the )?(?:simpler|cleaner|more robust|better|safer|best path)\b|\bdeferred\b|\bcan handle\b|\bmay be added\b/i },
  // plans: a next step beyond the immediate action
  { cls: 'plan', weight: 3, pattern: /\b(?:next steps?(?: (?:is|are|would be|will be))?:?|the next step|remaining(?: work| tasks| items)?:|still (?:need|needs|have|has) to|still to (?:do|be)|left to do|to ?do:|TODO:|follow[- ]up|not (?:yet|done yet) (?:implemented|done|tested|verified)|we(?:'ll| will) (?:then|next|also need|need)|after (?:that|this),? (?:we|i)|then (?:we|i)(?:'ll| will| can| should)|once (?:that|this) is done|we (?:still )?need to (?:\w+ly )?(?:add|update|implement|write|create|fix|migrate|handle|support|test|refactor|make|change|remove|move|document|verify|mock|rewrite|clean|rename|split|extract)|it's important to|don't forget to|remember to|should also|will (?:also )?need to|pending:?|future (?:work|improvements?))\b/i },
  { cls: 'plan', weight: 2, pattern: /^(?:then|next|finally|afterwards|after that|also),?\s+(?:we(?:'ll| will| can| should)? |i(?:'ll| will)? )?(?:add|update|implement|write|create|fix|migrate|handle|support|test|refactor|change|remove|move|document|verify|ensure|run|modify|rewrite|clean|rename|deploy|configure|install|replace|extract|integrate)\b/i },
  { cls: 'plan', weight: 1, pattern: /^(?:add|update|implement|write|create|fix|migrate|handle|support|test|refactor|change|remove|move|document|verify|ensure|run|stage|commit|push|deploy|configure|install|replace|rename|extract|integrate|investigate)\b/i },
  // changes: work reported done
  { cls: 'change', weight: 3, pattern: /^(?:(?:i|we)(?:'ve| have)|i|we|now)?\s*(?:successfully |also |just |now )?(?:updated|added|created|fixed|modified|changed|removed|deleted|renamed|implemented|refactored|moved|replaced|wrote|written|rewrote|set up|configured|installed|enabled|disabled|committed|pushed|improved|extracted|migrated|converted|cleaned up|merged|restored|reverted|applied|introduced|exported|imported|generated|built|deployed|documented|integrated|adjusted|corrected|simplified|split|wrapped|made)\b/i },
  { cls: 'change', weight: 2, pattern: /\b(?:has been|have been|was|were|is now|are now) (?:successfully )?(?:updated|added|created|fixed|modified|changed|removed|deleted|renamed|implemented|refactored|moved|replaced|written|configured|installed|enabled|disabled|committed|pushed|improved|extracted|migrated|converted|cleaned up|merged|restored|applied|generated|built|deployed|documented|integrated|resolved)\b|^✅|\bnow (?:uses|supports|handles|returns|shows|works|includes|has|reads|writes|stores|accepts|checks|runs)\b/i },
];

/** Text that is code, a log line, a table row or a path, not prose. */
export function looksLikeCode(sentence: string): boolean {
  if (/^\s*\d+\s*[:→|]/.test(sentence)) return true;
  if (/^\s*(?:def|class|import|from|return|const|let|var|function|if|for|while|self\.|export|public|private|#include|package|func|fn|use|pub|async|await)\b[^.!?]*[({=;:]/.test(sentence)) return true;
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

/** A verb that makes a statement of a fragment (inflected forms only: "show" and "test" are nouns in a list). */
const FINITE_VERB = /\b(?:is|are|was|were|has|have|had|does|did|do|can|cannot|will|would|should|could|must|may|might|\w{2,}ed)\b|\b(?:fails|works|runs|returns|uses|needs|requires|supports|contains|exists|passes|breaks|calls|reads|writes|shows|lists|creates|points|causes|means|keeps|sets|gets|gives|takes|makes|matches|blocks|ignores|handles|expects|accepts|includes|lacks|stores|loads|checks|starts|stops|listens|resolves|overrides|depends|defaults|belongs|pass|fail|exist|remain|crash|hang|succeed|differ)\b/i;

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

/** What a heading or a lead-in above a sentence says about the sentences under it. */
const LEAD_CLASSES: ReadonlyArray<readonly [RegExp, SentenceClass]> = [
  // Under a question ("## 1. Semantic Overlays - Examples or Exhaustive?") stands its answer; under an offer, options.
  [/^(?!.*\b(?:would you like|do you want|want me to|shall i|should i|should we|which (?:one|would|do you))\b).*\?\s*$/i, 'finding'],
  [/\b(?:options?|alternatives|would you like|do you want|want me to|you (?:can|could|may|might)|choose|pick one|which (?:one|would)|here are (?:your|some|a few)|possible (?:fixes|solutions|causes|approaches)|to use (?:it|the|this)|usage|how to|example|examples|e\.g\.)\b/i, 'other'],
  [/\b(?:root cause|cause|problem|issue|finding|findings|analysis|diagnos\w*|observ\w*|discover\w*|what (?:i|we) found|key (?:insight|facts?)|result|results|status)\b/i, 'finding'],
  // "Updated Appendix TODO Items:", "Added next steps section:" head what was changed in a document, not the plan.
  [/^[^a-z]*(?:updated|added|created|reorganized|reorganised|rewrote|rewritten|expanded|revised|amended)\b/i, 'change'],
  [/\b(?:next steps?|todo|to do|remaining|still (?:needed|to do)|follow[- ]ups?|recommend\w*|suggest\w*|to (?:complete|finish))\b/i, 'plan'],
  [/\b(?:plan|steps|here's what (?:i'll|we'll|i will|we will) do|we need to|i'll need to|to do this)\b/i, 'plan'],
  [/\b(?:decision|decisions|approach|solution|strategy|design|architecture)\b/i, 'decision'],
  // "Changes made:", "Updates", "Fixes applied"; not a title's noun ("CRITICAL UPDATE: NVMe Error Timeline").
  [/\b(?:changes?|changed|updates|^update\b|updated|fix(?:es|ed)?|implement\w*|added|created|done|completed|summary of|what (?:i|we) (?:did|changed)|features?|includes?|deliverables?|files? (?:created|modified))\b/i, 'change'],
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

function classifyAssistant(sentence: string, lead?: string): Classified {
  if (looksLikeCode(sentence) || /^[+-]\s{2,}|^[+-](?=[^\s+-])/.test(sentence)) return { cls: 'other', score: 0 };
  // Code on its own (a command, a call) states nothing: what it did is in its result.
  if (/^(?:`[^`]+`[\s,;.]*)+$/.test(sentence)) return { cls: 'other', score: 0 };
  // Agreeing with the user or apologising restates what the user said (their request keeps it): no statement of its own.
  if (CONCEDING.test(sentence)) return { cls: 'pleasantry', score: 0 };
  // A pleasantry opening: what follows it decides ("Perfect! The commit is signed." is a finding).
  const afterPleasantry = sentence.replace(PLEASANTRY_OPENING, '').trim();
  const body = afterPleasantry.replace(DISCOURSE_OPENING, '').trim();
  if (body.length < 4 || proseWords(body) === 0) return { cls: proseWords(sentence) > 0 ? 'pleasantry' : 'other', score: 0 };
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
    // "I need to create the base structure myself since the agents can't get permission": an action with its reason is a choice.
    if (CHOSEN_ACTION.test(body) && /\b(?:since|because|as (?:the|it|they|this|we)|so that|to avoid|to prevent|otherwise)\b/i.test(body) && proseWords(body) >= 8) return { cls: 'decision', score: 2 };
    return { cls: 'process', score: 0 };
  }
  if (REQUEST_ECHO.test(body) || CONVERSATION_NARRATION.test(body)) return { cls: 'process', score: 0 };
  if (NARRATION.test(body) && !/\b(?:because|root cause|turns out|is caused by|the (?:issue|problem|cause) (?:is|was))\b/i.test(body)) return { cls: 'process', score: 0 };
  if (PLEASANTRY_SENTENCE.test(body) || PLEASANTRY_SENTENCE.test(sentence) || (FLUFF.test(body) && !/\b(?:because|error|fail|root cause)\b/i.test(body))) return { cls: 'pleasantry', score: 0 };
  if (EXPECTATION.test(body)) return { cls: 'other', score: 0 };
  // A sentence that stops at a conjunction ("This is significant because") was cut where a list began: it states nothing.
  if (/\b(?:because|and|or|but|that|which|since|when|if|to|says|said|reads|shows|showed)\s*[:：]?\s*$|\b(?:with|of|for|as|the|a|an|is|are|was|were|by)\s*$/i.test(body)) return { cls: 'other', score: 0 };
  if (FILE_REQUEST.test(body)) return { cls: 'process', score: 0 };
  if (/^(?:this|here) is (?:a |an |the )?(?:comprehensive |detailed |complete |full |high-level |brief |quick )?(?:plan|overview|summary|breakdown|outline|list|rundown)\b/i.test(body)) return { cls: 'other', score: 0 };
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
  if (OFFER.test(body) || /^(?:option|choice|alternative) \w{1,2}\b/i.test(body)) return { cls: 'other', score: 0 };
  if (/\?\s*$/.test(body)) return { cls: 'other', score: 0 };
  const scores = new Map<SentenceClass, number>();
  for (const cue of AGENT_CUES) if (cue.pattern.test(body)) scores.set(cue.cls, (scores.get(cue.cls) ?? 0) + cue.weight);
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
  if (/[:：]\s*$/.test(body) && (top < 2.5 || isFragment(body)) && !/\d|\b(?:found|confirm\w*|works?|fail\w*|because)\b/i.test(body)) return { cls: 'other', score: 0 };
  if (best !== undefined && top >= 1.5) return { cls: best, score: top };
  if (isHeading(body)) return { cls: 'other', score: 0 };
  if (afterPleasantry !== sentence && proseWords(body) <= 3) return { cls: 'pleasantry', score: 0 };
  // A plain statement about the work is what was found, unless it is general talk.
  if (proseWords(body) >= 4 && STATEMENT_VERB.test(body)) return { cls: 'finding', score: 1 };
  return { cls: best ?? 'other', score: top };
}

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

// ------------------------------------------------------------- thoughts

/**
 * A thought summary some agents print among their answer (Copilot and Gemini
 * in SpecStory exports): a bold gerund title on its own line, then one
 * paragraph of first-person narration ("**Analyzing the Dependencies**\n\n
 * I've just realized that…"). It is the agent thinking aloud, read as
 * reasoning, not as what it told the user.
 */
const THOUGHT_TITLE = /^\*\*[A-Z][a-z]+ing\b[^*\n:]{0,80}\*\*[ \t]*$/;
const THOUGHT_OPENING = /^(?:i(?:'m|'ve|'ll|'d| am| have| will| need| should| think|\b)|my |okay|ok,|now,? |currently|it (?:seems|looks|appears)|having |after |with |so,? )/i;

/** Splits text into the thought summaries it holds and the rest (the answer). */
export function splitThoughts(text: string): { thoughts: string; answer: string } {
  if (!text.includes('**')) return { thoughts: '', answer: text };
  const paragraphs = text.split(/\n[ \t]*\n/);
  const thoughts: string[] = [];
  const answer: string[] = [];
  for (let i = 0; i < paragraphs.length; i++) {
    const p = paragraphs[i]!.trim();
    const next = paragraphs[i + 1]?.trim() ?? '';
    if (THOUGHT_TITLE.test(p) && THOUGHT_OPENING.test(next)) {
      thoughts.push(next);
      i++;
      continue;
    }
    answer.push(paragraphs[i]!);
  }
  return thoughts.length ? { thoughts: thoughts.join('\n\n'), answer: answer.join('\n\n') } : { thoughts: '', answer: text };
}

// ------------------------------------------------------------- sentences

/** Markdown and decoration removed, inline code kept: `**Problem:** x` → `Problem: x`. */
export function cleanMarkdown(text: string): string {
  return text
    .replace(/^\s{0,3}#{1,6}\s+/, '')
    .replace(/^\s*>\s?/, '')
    .replace(/^\s*(?:[-*+•]|\d+[.)]|\[[ xX]\])\s+/, '')
    // Emphasis marks, outside inline code and inside no identifier (`/pydicom__pydicom/`, `__init__.py` keep theirs).
    .replace(/(`[^`]*`)|\*\*/g, (m, code: string | undefined) => code ?? '')
    .replace(/(`[^`]*`)|(?<![\w/.])__(?=\S)([^_`]*?\S)__(?![\w/.])/g, (m, code: string | undefined, inner: string) => code ?? inner)
    .replace(/(`[^`]*`)|(^|\s)[*_]([^\s*_][^*_`]*[^\s*_])[*_](?=\s|[.,;:!?]|$)/g, (m, code: string | undefined, lead: string, inner: string) => code ?? `${lead}${inner}`)
    .replace(/^[\s\u{1F300}-\u{1FAFF}\u{2600}-\u{27BF}\u{2B50}\u{2705}\u{274C}\u{FE0F}]+(?=\S)/u, (m) => (/[✅❌⚠]/u.test(m) ? m.trim() + ' ' : ''))
    .replace(/\s+/g, ' ')
    .trim();
}

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
  if (proseWords(body) < 4 || !/\b(?:is|are|was|were|be|that|because|since|means|seems?|appears?|might|may|could|would)\s*$|\b(?:is|are|was|were) (?:that|because)\b/i.test(body)) return undefined;
  // Declarative ("the cause is that:"), not an instruction ("Add proper switching logic that:").
  if (!/\b(?:is|are|was|were|be|seems?|appears?|means|because)\b/i.test(body)) return undefined;
  if (PROCESS_OPENING.test(body) || NARRATED_ACTION.test(body) || OFFER.test(body) || HELP_OPENING.test(body)) return undefined;
  return body;
}

/** Longest sentence considered; longer pieces are prose dumps or pasted text. */
const SENTENCE_MAX_CHARS = 600;
const SENTENCE_MIN_CHARS = 2;
// Also where an agent left out the space ("…this third script.I will now use `curl`", "…will work!Lets try"):
// after a word of three letters or more, before a word that opens sentences ("http.Client to" is a call).
const SENTENCE_BREAK =
  /(?<=[.!?])\s+(?=[A-Z0-9`"'(\[*_✅❌])|(?<=\b[a-z]{3,}[.!?])(?=(?:I|The|This|That|These|It|We|Let|Lets|Let's|Now|So|Then|But|However|Another|Since|Also|Next|Finally|Here|There|Our|My|You|If|When|After|Before|On|In|As)\s)/;
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
    else if (inDiff && !DIFF_LINE.test(line) && !lines.slice(i + 1, i + 4).some((next) => /^\+|^-(?! \S|-)/.test(next))) inDiff = false;
    out.push(inDiff ? '' : line);
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

/**
 * Splits prose into sentences: at sentence punctuation before a capital, a
 * digit or a quote, and at line breaks; fenced code longer than a short chain
 * is left out; list markers and markdown emphasis are removed. Each sentence
 * carries the heading or lead-in it stands under (a list under "Changes made:"
 * reports changes); a blank line before plain prose ends a lead-in's reach.
 */
export function sentencesOf(text: string): Sentence[] {
  const body = withoutDiffs(
    text.replace(/```[^\n]*\n([\s\S]*?)```/g, (_, code: string) =>
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
  for (const line of body.split('\n')) {
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
    blank = false;
    const introduces = leadIn(line);
    let last: string | undefined;
    // The list marker goes first: "1. Taking the state" is one sentence, not "1." and another.
    for (const piece of line.replace(/^(\s*)(?:\d+[.)]|[a-z][.)])\s+(?=\S)/, '$1- ').split(SENTENCE_BREAK)) {
      const sentence = cleanMarkdown(piece);
      if (sentence.length < SENTENCE_MIN_CHARS || sentence.length > SENTENCE_MAX_CHARS || /^[-=*_|:#\s]+$/.test(sentence)) continue;
      last = sentence;
      out.push({
        text: sentence,
        index: out.length,
        ...(lead !== undefined ? { lead } : {}),
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
