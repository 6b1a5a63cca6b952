/**
 * The cues of the sentence classes (classify.ts), kept as data: the classes,
 * the openings that decide before the rest is read, the rule patterns of user
 * sentences and the weighted agent cues. Each is a pattern with the class it
 * votes for; classify.ts reads them.
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
  /** A second pattern the sentence must match too (case-sensitive where `pattern` is not). */
  readonly also?: RegExp;
}

/**
 * A hedge: the statement says it is a guess ("this might be…", "может не обновляться", "prawdopodobnie"). English
 * words by ASCII word boundaries; the other languages' (Polish, Russian, German, Spanish, French, Portuguese) by
 * letter boundaries; Chinese and Japanese ones anywhere.
 */
export const HEDGE = new RegExp(
  String.raw`\b(?:might|may|could|perhaps|possibly|probably|likely|seems|appears|it(?:'s| is) possible)\b` +
    String.raw`|(?<!\p{L})(?:może|prawdopodobnie|możliwe|chyba|wydaje się|pewnie|вероятно|возможно|похоже|кажется|скорее всего|видимо|наверное|может|могут|предположительно|vielleicht|wahrscheinlich|möglicherweise|vermutlich|scheint|könnte|quizás?|probablemente|posiblemente|parece|podría|peut-être|probablement|semble|pourrait|talvez|provavelmente|poderia)(?!\p{L})` +
    '|可能|也许|似乎|大概|かもしれ|たぶん|おそらく',
  'iu',
);

// ----------------------------------------------------------------- openings

/** Agent narration of its own next step: decides "process" before anything else is read. */
export const PROCESS_OPENING =
  /^(?:(?:ok(?:ay)?|alright|all right|so|now|first|next|then|great|perfect|good|excellent)[,!.]?\s+)*(?:let me|let's (?!go with\b|use\b|call\b|name\b|keep\b|stick\b|switch\b|stay\b|not\b)[\w-]+|now,? let's|i'll (?:check|look|read|search|examine|start|first|run|verify|investigate|explore|review|inspect|find|open|take|get|begin|now|also|go ahead|proceed|continue|do|try|test|see|help|create|update|add|fix|make|write|implement|modify|apply|edit|change|remove|delete|install|set up|setup|commit|push|move|rename|clean|use the|use a tool|summarize|provide|analy[sz]e)|i will (?:check|look|read|search|examine|start|first|run|verify|investigate|explore|review|inspect|find|open|now|also|proceed|continue|create|update|add|fix|make|write|implement|modify|help|try|use the)|i need to (?:check|look|read|see|find|examine|verify|understand|investigate|explore|review|first|follow|update|create|add|fix|make|write|implement|modify|run|get|re-?examine|re-?check|re-?run|re-?read|double[- ]check|dig|figure out|carefully)|we can use (?:the )?`[^`]+` (?:command|tool|utility) to|i should (?:check|look|read|see|find|examine|verify|first)|i'm going to|i am going to|i'm now(?! (?:seeing|facing|getting|hitting|encountering|receiving|observing)\b)|i am now (?:going|checking|looking|reading)|i can see|i see (?:that |the |a |it |there |now)|(?:now,? )?i (?:now )?(?:understand|know|get|see) (?:what|how|why|where|which|who)\b|i notice|i'll now|looking at|checking|reading|searching|running|examining|exploring|investigating|reviewing|inspecting|now i (?:need|have|can|see|will|'ll|'m|am)|the user (?:wants|is asking|asked|has asked|wants me|would like|is requesting|requested|needs|is)|user wants|we need to (?:check|look|see|find|first|examine|verify|understand)|to (?:do|start|begin) (?:this|that)|time to|moving on|we see (?:that|the|a)|i(?:'m| am) (?:now |also |currently |still )?(?!(?:seeing|facing|getting|hitting|encountering|receiving|observing)\b)(?:[\w-]+ing)\b|currently,? i(?:'m| am)|my (?:(?:current|initial|immediate|first|main|next|new|revised) )?(?:goal|next move|aim|plan) is to (?:first )?(?:understand|check|look|see|run|find|examine|list|confirm|verify|inspect|read|investigate|explore|review|locate|search)|now that (?:i|we|the|everything)[^,]*,\s*(?:let's|let me|i'll|we can|we'll|i will|we should)|(?:first|next|then),? (?:we|i) (?:should|need to|will|'ll|can) (?:find|look|check|see|open|search|navigate|locate|list|read|run|examine|create)|we (?:should|can|will|'ll) (?:navigate|find|look|check|open|search|locate|list|read|run|examine|create a new file|create a script|start by)|let's use (?:the )?(?:`[^`]+`|\w+_\w+|find_file|search_\w+|curl|grep|ls|cat|find)|calling `|marking (?:the )?(?:remaining )?todos?|sprawdźmy|sprawdzę|zobaczmy|teraz sprawdź|widzę|(?:teraz|najpierw|następnie|potem|zaraz|dalej),? [a-ząćęłńóśźż]+ę(?![a-ząćęłńóśźż])|давай(?:те)?|посмотрим|проверим|сейчас (?:я )?(?:посмотрю|проверю))/i;

/** A greeting, thanks, praise or apology at the start; the rest of the sentence may still carry content. */
export const PLEASANTRY_OPENING =
  /^(?:great|perfect|excellent|awesome|nice|good|wonderful|fantastic|amazing|brilliant|cool|thanks|thank you|thx|sorry|apologies|you're (?:absolutely )?right|you are (?:absolutely )?right|absolutely|sure|of course|certainly|got it|understood|hi|hello|hey|yes|yep|ok(?:ay)?|alright|excellent progress|good (?:catch|point|question|progress|news)|we're making progress|making progress|good progress)\b[\s!.,:;—–-]*/i;

/**
 * The agent announcing its own next action or reporting that it looked:
 * "Okay, I will refactor…", "I've reviewed your file", "Ok, I have the
 * content of…", "Here are the blocks…", "Please add X to the chat", and asking
 * the user for more ("It would be helpful to see…", "Could you share…").
 */
export const NARRATED_ACTION =
  /^(?:(?:ok(?:ay)?|alright|so|now|sure|right|understood|first|next|then)[,!.]?\s+)*(?:(?:i|we)(?:'ll| will| am going to|'m going to| are going to|'re going to) (?!use\b|go with\b|switch\b|keep\b|store\b|avoid\b|need\b|call it\b|name\b)\w+|i should (?:ask|follow|provide|note|mention|start|focus|make sure|keep|also|now|strictly|first)|i(?:'ve| have) (?:reviewed|read|looked|checked|examined|analy[sz]ed|gone through|got|received|the content|the contents|now (?:reviewed|read|got|have))|i have (?:the|your) |here (?:are|is) (?:the|a|an|my|your|some)\b|please (?:add|share|provide|paste|send|run|confirm|let me)|(?:also,? )?it (?:would|will|might) (?:also )?be (?:helpful|useful|good|great) (?:to see|to have|to know|if you)|(?:could|can) you (?:please )?(?:also )?(?:add|share|provide|paste|send|show|run|confirm)|if you (?:could|can) (?:add|share|provide|paste|send|show)|(?:below|above) (?:are|is) (?:the|a)\b)/i;

/** The agent asking the user to supply something ("…, please add the following files or directories to the chat:"): what it lists under that is what it asks for, nothing found. */
export const ASKS_USER_FOR = /\b(?:please|could you|can you|would you|if you (?:could|can))\s+(?:also\s+)?(?:add|share|provide|paste|send|upload|attach)\b/i;

/**
 * An opening that only says the agent looked ("I see", "I notice that",
 * "Looking at the code,", "After checking the logs,"): the rest of the
 * sentence is what it found.
 */
export const OBSERVED =
  /^(?:(?:ok(?:ay)?|now|so|and)[,]?\s+)?(?:i (?:can |now )?see(?: now)?(?: that)?|i (?:notice|noticed)(?: that)?|i (?:have )?(?:found|discovered|realized|realised)(?: that)?|(?:looking|having looked) (?:at|through|into) [^,]{1,80},|(?:after |upon )?(?:checking|reviewing|examining|reading|inspecting|investigating) [^,]{1,80},)\s+/i;

/** The agent about to look at something ("Let me check…", "I'll first verify…"). */
export const LOOK_NARRATION =
  /^(?:(?:ok(?:ay)?|now|first|next|then|so)[,]?\s+)?(?:let me|let's|i'll|i will|i need to|we need to|i should|we should)\s+(?:first\s+|now\s+|also\s+)?(?:check|see|verify|look|investigate|confirm|find out|test|examine|inspect|review|read|search|explore|list)\b/i;

/** The agent committing to an action of its own (not a look at something): with a reason it is a choice. */
export const CHOSEN_ACTION =
  /^(?:(?:ok(?:ay)?|so|now|first|then)[,]?\s+)*(?:i|we)(?:'ll| will| need to| have to| must| should|'m going to| am going to)(?: \w+ly)? (?:create|write|implement|use|switch|change|modify|add|remove|drop|fix|update|move|rename|delete|keep|skip|avoid|do|build|set up|install|replace|revert|disable|enable|restructure|rewrite|split|merge|handle)\b/i;

/**
 * What a reading of a result draws from it beyond what it showed: a cause, a consequence, a contrast, a guess
 * ("looks like OpenWrt"), what it requires ("you need to configure `queryLog`"). A plain statement the agent makes
 * right after a command whose outcome the digest keeps as a line, with none of these (nor a hedge), says that
 * outcome again in prose ("I see that there isn't a `lint` script" after `Script not found "lint"`).
 */
export const CONCLUDES = /\b(?:because|since|so|therefore|thus|hence|means?|meaning|indicat\w*|suggest\w*|impl(?:y|ies)|caus\w*|root|turns out|instead of|rather than|but|however|although|though|whereas|why|expected|unexpected\w*|looks? like|needs?|should|must|by default)\b/i;
/** A reason given for what the sentence does ("since the agents cannot write", "to avoid a second lock"). */
export const REASON_CLAUSE = /\b(?:since|because|as (?:the|it|they|this|we)|so that|to avoid|to prevent|otherwise)\b/i;
/** A reason put first ("Since this is a Perl CGI environment, "): what follows it says what the agent does. */
export const LEADING_REASON = /^(?:since|because|as|given that|now that)\b[^,]{0,160},\s*/i;
/**
 * The agent saying what it does next ("let me move on to…", "I'll also start…", "I will try to upload…"), but not
 * that it will say, answer or wait ("Since no task is given yet, I'll state that I'm waiting…": a reply, no choice).
 */
export const NARRATED_ACT =
  /^(?:(?:ok(?:ay)?|so|now|first|then)[,]?\s+)*(?:let me|let's|i(?:'ll| will| need to| have to| must|'m going to| am going to)|we(?:'ll| will| need to| have to| must))\s+(?!(?:(?:just|now|also|first|simply|then|only)\s+)*(?:state|say|reply|respond|answer|explain|describe|summari[sz]e|outline|present|show|note|mention|tell|ask|clarify|acknowledge|wait|stop|continue|proceed|start by)\b)\w/i;

/** The agent offering its help with what the user asked: a restatement of the request. */
export const HELP_OPENING = /^(?:(?:ok(?:ay)?|sure|alright|great)[,!.]?\s+)*(?:i(?:'ll| will| can|'d be happy to) help(?: you)?|i(?:'ll| will) (?:help|assist))\b/i;

/**
 * "instead of" in a description of what something does or how it stands ("Your
 * hook is using the old script instead of the new one", "The test is currently using
 * real git commands instead of mocking them", "it seems to have listed
 * the tags instead of switching", "it's all on one line with spaces instead of
 * newlines", "The UCI configuration had `server` set as a single option instead of a list"), seen by the agent or
 * not ("I see that the linter errors are all about using single quotes instead of double quotes"): what was
 * found, not a choice.
 */
export const DESCRIBED_INSTEAD = /^(?:(?:i|we) (?:can )?(?:see|notice|noticed|found|realize|realized)(?: that)? )?(?!(?:i|we|let's|let me|you)\b)(?:[^.!?]|\.(?=\w))*\b(?:(?:is|are|was|were|'s|'re|seems? to(?: have)?|appears? to(?: have)?) (?:still |just |now |actually |only |all |currently |already |also |really |apparently )?(?:\w+(?:ing|ed)|on|in|at|inside|under|with|about)|(?:has|had|have)\b[^.]{0,60}?\b(?:set|configured|defined|declared|stored|saved|written|listed|typed|formatted) (?:as|to))\b[^.]*\b(?:instead of|rather than)\b/i;

/**
 * "instead of" in what went wrong, not what was chosen: the verb says it was a
 * mistake ("I'm incorrectly editing files in the main workspace instead of the
 * session directory", "our edit only appended to the file instead of replacing
 * it"), or the sentence reports what it looks like happened ("It looks like the
 * hook ran the old script instead of the new one").
 */
export const MISTAKEN_INSTEAD =
  /\b(?:incorrectly|mistakenly|accidentally|wrongly|erroneously|only)\s+\w+(?:ed|ing)\b[^.]*\b(?:instead of|rather than)\b|^(?:it (?:looks|seems|appears) (?:like|that|as if)|apparently|looks like)\b[^.]*\b(?:instead of|rather than)\b/i;

/** A lead-in to what follows ("To improve the file, we can make the following changes", "Here's how:"): no statement of its own. */
export const LEAD_IN = /\b(?:(?:i|we)(?: would|'d)? (?:say|note|add|summari[sz]e|answer)|the following(?: \w+){0,3}|as follows|below|these (?:changes|steps|files|commands)|here (?:are|is|'s) (?:your |the |some |a few |my |two |three |several )?(?:options?|choices|alternatives|approaches|next steps|steps|suggestions|possibilities))\s*:?\s*$|^to \w+[^,]{0,120}, (?:we|i|you|let's) (?:can|need to|will|should|must|'ll)\b[^.]*(?::|\bneed to)?\s*$|^(?:here(?:'s| is| are)|this is) (?:how|what|why|the plan)\b/i;

/**
 * A connective or an interjection that opens a sentence ("Specifically,",
 * "However,", "Also,", "Wait,", "Hmm,"): it links the sentence to the one
 * before and says nothing itself, so what follows it is classified
 * ("Specifically, I'm focusing on…" and "Wait, let's double check…" are narration).
 * "Instead," stays: it marks a choice.
 */
export const DISCOURSE_OPENING =
  /^(?:(?:specifically|further(?:more)?|additionally|also|however|moreover|in addition|meanwhile|besides|similarly|likewise|notably|importantly|interestingly|actually|basically|essentially|wait|hmm+|ultimately|at this point|so far|lastly)(?:,\s*|\s+(?=i\b|we\b|let\b|the\b|this\b|it\b|there\b))|(?:and|but|plus),\s*)+/i;

/**
 * The agent grading its own work ("This is simpler, more robust, and will work for all real-world cases", "This is
 * now clean, modular, and follows best practices", "This general-purpose library is quite comprehensive"): a claim of
 * quality with no fact in it. With its reason ("…simpler because the parser already splits lines") it says something.
 */
export const QUALITY_CLAIM =
  /^(?:this|that|it|these|(?:this|that|these|the)(?: new| updated| resulting| final| refactored| current)?(?: [\w-]+)? (?:code|solution|approach|implementation|changes?|version|design|structure|setup|library|module|refactor(?:ing)?|test suite|tests|file|function|class|script))\s+(?:is|are|was|were|would be|will be|should be|remains)\s+(?:(?:now|much|also|quite|very|more|fully|really|a lot|significantly|far)\s+)*(?:simpler|cleaner|clean|modular|robust|maintainable|readable|elegant|comprehensive|efficient|better|well[- ][a-z]+|production[- ]ready|idiomatic|organi[sz]ed|straightforward|flexible|extensible|reusable|testable)\b(?!\s+to\s)(?![\s\S]{0,200}?\b(?:because|since|due to|as it|so that|than|but|instead of)\b)/i;

/**
 * What a change is good for, said of it as a whole: "This ensures your changelog is accurate", "This improves the
 * UX and prevents confusion". A claim, not a fact (with no reason given; see classify for the identifiers it must
 * lack).
 */
export const BENEFIT_CLAIM =
  /^(?:this|that|it|these(?: changes?| fix(?:es)?| updates?)?|(?:this|the) (?:change|fix|update|approach|refactor(?:ing)?))\s+(?:(?:also|now|further|will|should|would)\s+)*(?:ensures?|improves?|helps?|prevents?|avoids?|simplifies|enables?|allows?|keeps?|makes? (?:it|the \w+|things|everything) (?:easier|simpler|clearer|cleaner|safer|more)|provides? (?:a |an )?(?:better|cleaner|clearer|consistent|robust|more))\b(?![\s\S]{0,200}?\b(?:because|since|due to|instead of|than)\b)/i;

/** Celebration and self-praise: "now production-ready 🎉", "works perfectly!". */
export const FLUFF = /[🎉🚀✨🥳💪]|\b(?:production-ready|perfectly|flawlessly|like a charm|great job|well done|masterpiece)\b.*!?$/u;

/**
 * A field a report could not fill ("Schema Name: Not explicitly mentioned in the summary.", "Status: Unknown, as
 * the summary does not provide details."): it says that nothing is known.
 */
export const NOTHING_KNOWN = /^(?:[\w /-]{1,30}:\s*)?(?:unknown(?=\s*(?:[.,;(]|$))|not (?:explicitly )?(?:mentioned|specified|stated|provided|given|shown|documented|available)\b|none (?:mentioned|given|specified|found)\b|n\/a\b)/i;

/** Narration behind a lead clause: "Based on the spec, I'll start…", "Then re-applying the changes". */
export const NARRATED_AFTER = /^(?:based on|given|with|after|before|now that|since|if so|if (?:that|this|it) (?:works|fails|passes)|to \w+)\b[^,]{0,120},\s*(?:i(?:'ll| will|'m| am| understand| now understand)|let me|let's|we(?:'ll| will| can| should))\b|^(?:then|next|now|first|finally),?\s+[\w-]+ing\b/i;

/**
 * Narration of the agent's own work in progress or of its next move, wherever
 * it stands: "…, so we can just run `reproduce.py` directly", "my current
 * focus is…", "a fresh `cargo test` run is in progress", "the agents are still
 * working", "this will help us see if…", "Maybe there's a connectivity issue".
 * A sentence is narration when any of these matches. Kept as separate patterns,
 * not one alternation: V8 compiles a pattern in one block when it first runs,
 * and as one pattern this was the largest the host compiled (about 35 ms; the
 * largest part takes about 8).
 */
export const NARRATION: readonly RegExp[] = [
  // The agent reading its own prompt and settling how to answer: "The prompt says "Reply in Russian." …, I'll just reply textually".
  /(?:^|\b(?:the|my|this|your) )(?:system )?prompt (?:says?|said|asks?|requires?|wants?|mentions?|tells? me|instructs?|specifies)\b|\b(?:i|we)(?:'ll| will)(?: just| simply| only)? (?:reply|respond|answer)\b/i,
  /(?:,|;|\bso|\band)\s+(?:now\s+)?(?:we|i)(?:'ll| will| can| could| should| need to| must| want to| are going to|'re going to| am going to|'m going to)(?: now| just| also| then| first| simply)? (?:run|try|check|submit|use|look|see|proceed|continue|test|print|list|open|create|verify|examine|inspect|read|search|find|investigate|attempt|start|begin|move on|focus)\b/i,
  /^(?:my|our) (?:current |initial |immediate |main |primary |new )?(?:focus|attention|next step|next move|priority|thinking|thought process|process)\b/i,
  // The agent naming what it turns to next, with no statement of its own: "Now the full suite and the type check.",
  // "Now the router: drop the `router.use` and chain the limiter…" (what it does there is said when it is done).
  /^(?:(?:ok(?:ay)?|and|so),?\s+)?(?:now|next|finally)[,:]?\s+(?:on to |onto )?(?:the|a|an|our|my)\s+(?![^.:;!?]*\b(?:is|are|was|were|has|have|had|does|did|do|can|cannot|will|would|should|could|must|may|might|\w+(?:s|ed))\b)[^.:;!?]{1,60}(?::|\.?$)/i,
  // A reason, then what the agent does about it: "The outage test changed, so let me re-run the rate limit suite".
  /,\s*so (?:now |first |then )?(?:let me|let's)\s/i,
  /^(?:(?:my|our) (?:current |initial |immediate |main |primary |new |revised )?(?:plan|intention|aim|goal) (?:now |here )?is|(?:(?:then|now|next|first|so),?\s+)?(?:i|we)(?:'m| am|'re| are)? (?:now )?(?:plan(?:ning)?|intend(?:ing)?|aim(?:ing)?|going) to) (?:first )?(?:list|check|look|confirm|run|re-?run|read|inspect|examine|review|see|verify|investigate|explore|find|search|understand|analy[sz]e|test|gather|scan|trace|debug|diagnose|figure)\b/i,
  /^if (?:it|this|that|so|not|the \w+) (?:still )?(?:fails|doesn't work|does not work|breaks|errors|succeeds|works|passes)\b/i,
  /^the (?:goal|aim|objective|idea) (?:here |now )?is to\b/i,
  // A step taken, said as a decision: "I've decided to run the script `scripts/create_tree_sitter_configs.sh`".
  /\b(?:i(?:'ve| have)?|we(?:'ve| have)?) (?:now )?decided to (?:first )?(?:run|re-?run|execute|launch|invoke|check|look|examine|inspect|read|open|view|list|search|grep|query|test|tackle|start|begin|focus|turn|work on|move on|dig|dive)\b/i,
  /^(?:this|the|that|our|my) (?:script|test|command|snippet|code|run|check) (?:will|should|is going to) (?:attempt|try|check|verify|test|reproduce|run|print|help|confirm|show)\b/i,
  /\b(?:is|are) (?:still )?(?:in progress|underway|running in the background)\b|\b(?:went|moved|was sent|is) (?:to|into) (?:the )?background\b/i,
  /\b(?:is|are) (?:still (?:actively )?|actively )(?:working|progressing|chugging)\b/i,
  /\b(?:is|are) (?:still )?(?:working|progressing) on\b/i,
  /^(?:(?:but|and|so|or|then)\s+)?(?:maybe|perhaps|possibly)\b/i,
  /^(?:this|that|it) (?:will|should|would|might|may) (?:help|allow|let) (?:us|me)\b/i,
  // The agent reasoning about what the user said or what it is asked to do: "They just said "изучи" and repeated the
  // formatting rules", "If they want me to list files, I can do that too", "It doesn't strictly require me to output full files".
  /^they (?:just |also |only |then |now )?(?:said|asked|want(?:ed)?|repeated|mentioned|typed|wrote|requested|replied|responded|sent)\b|\b(?:if|when|in case) (?:they|the user) (?:want|wants|ask|asks|need|needs|prefer|prefers)(?: me)? to\b|^(?:it|this|that|the (?:prompt|instructions?|system prompt|task|request|user))(?: (?:doesn't|does not|don't|do not))? (?:strictly |really |explicitly |actually )?(?:require|requires|ask|asks|want|wants|expect|expects|tell|tells) me to\b/i,
  // What a command about to run does: "This will run both the extension tests and webview tests", "This will verify all
  // TypeScript types are correct", "This will stage the changes and create a commit", "This creates a production build".
  /^(?:this|that|it) (?:will|should|is going to) (?:now )?(?:(?:run|execute)\b(?=[^.]{0,60}\b(?:tests?|suites?|checks?|linters?|lint|builds?|scripts?|commands?|tsc|npm|pytest|jest|cargo)\b)|verify (?:that|whether|if|all|everything|our|the (?:changes?|fix|build|tests?|types?))|type-?check|lint|stage)\b|^(?:this|that|it) (?:creates?|makes?|produces?|runs?) (?:a|the) (?:production|release|debug|clean|fresh|full) build\b/i,
  // What a debugging step is for: "These changes will help identify where the issue is occurring", "This will help you see how…".
  /^(?:this|that|it|these|those|(?:this|these|the) (?:changes?|logging|debug(?:ging)? (?:output|statements?|prints?|logs?)|print(?: statements?)?|statements?|logs?|output|additions?))(?: \w+)? (?:will|should|would|might|may|can|could) (?:help|allow|let|enable)(?: (?:us|me|you))?(?: to)? (?:see|identify|find|track|debug|understand|diagnose|figure|pinpoint|narrow|determine|locate|trace|spot|catch|know)\b/i,
  /^i(?:'m| am) (?:(?:now|also|currently|still|just) ){0,2}(?:focused|ready|about to|keen|eager|curious|unsure|uncertain|considering|wondering|leaning|trying|thinking|planning|hoping|gearing up)\b/i,
  /^i (?:realized|realised) i\b/i,
  /^i(?:'ve| have) (?:just )?(?:reached|finished|completed|wrapped up) (?:the |my )(?:end|analysis|review|investigation|internal)/i,
  // The agent keeping its own task list: "I shouldn't mark it as completed if it failed", "Updating the todo list".
  /\bmark(?:s|ed|ing)? (?:it|this|that|them|these|those|everything|all(?: of them)?|(?:the|this|that|each|every|my) (?:todo|to-do|item|items|step|steps)) (?:all )?as (?:completed?|done|finished|in[ _-]progress|pending)\b|\b(?:the|my|our) (?:todo|to-do) list\b|\b(?:updat|tick)\w* (?:off )?(?:the |my |our )?todos\b/i,
  // An edit tool's status that an export printed into the agent's text (Cursor): "The string to replace was not found
  // in the file.", "The model made no changes to the file." (the edit it answers is the call's, not a finding).
  /^(?:the string to replace was not found in the file|the (?:apply )?model (?:made no changes to the file|provided an ambiguous search string|made the following changes))\b/i,
  // What a file holds, said of its worth and not its content: "The setup.py file contains a lot of useful information".
  /\b(?:contains?|has|have|includes?|provides?|gives?) (?:a lot of |lots of |plenty of |some |much |all the |the )?(?:useful|helpful|relevant|important|valuable|interesting|good|key|needed|necessary) (?:information|info|details|context|insights?)\b/i,
];

/** Verbs an instruction or a step to take opens with (not "note" or "keep": "Note that X is Y" states a finding). */
const STEP_VERBS = ['list', 'check', 'add', 'update', 'run', 'use', 'open', 'read', 'create', 'set', 'call', 'try', 'review', 'move', 'fix', 'change', 'find', 'search', 'test', 'write', 'make', 'delete', 'ask', 'tell', 'show', 'output', 'answer', 'keep', 'take', 'give', 'put', 'get', 'print', 'save', 'start', 'stop', 'send', 'return', 'pass'];
/** Verbs that, opening a sentence, are never its noun subject ("Ensure…", "Mention…"): any object follows. */
const STEP_ONLY_VERBS = ['mention', 'ensure', 'verify', 'remove', 'consider', 'replace', 'install', 'avoid', 'describe', 'explain', 'identify', 'compare', 'debug', 'inspect', 'confirm', 'provide', 'implement', 'modify', 'rename', 'reply', 'respond', 'focus', 'analyze', 'analyse', 'investigate', 'examine', 'include', 'look'];

/** A verb as a sentence opens with it: capitalised or not. */
function verbAlternation(verbs: readonly string[]): string {
  return verbs.map((v) => `[${v[0]!.toUpperCase()}${v[0]}]${v.slice(1)}`).join('|');
}

/**
 * A sentence opening with a bare verb and its object ("List the files needed…",
 * "Mention that…", "Check `saga.ts`…", "Use PowerShell as…", "Verify tests
 * pass"): an instruction or a step to take, not something found. After a verb
 * that is also a noun the object must show ("Test examples looked like keys",
 * "Update notes:" are statements).
 */
export const IMPERATIVE_OPENING = new RegExp(
  `^(?:(?:${verbAlternation(STEP_VERBS)})\\s+(?:(?:the|a|an|that|this|these|those|all|each|every|any|whether|if|how|why|what|which|it|them|your|my|our|sure|out|up)\\b|\`|[A-Z])|(?:${verbAlternation(STEP_ONLY_VERBS)})\\s+\\S)`,
);

/**
 * A step verb before a bare plural object ("Run tests to ensure…", "Add logs for…"): an instruction only when no
 * finite verb follows in its main clause ("Test examples in code looked like keys" is a statement).
 */
export const IMPERATIVE_PLURAL = new RegExp(`^(?:${verbAlternation(STEP_VERBS)})\\s+[a-z]{3,}s\\b`);
/** Where an instruction's main clause ends: its purpose or its condition. */
export const PURPOSE_CLAUSE = /\s(?:to|so that|in order to|until|before|after|when|if|once)\s|[,;:]/i;

/** A gerund that reports the agent at work ("Building…", "Reviewing…"), not what it changed ("Adding…", "Keeping…"). */
export const PROGRESS_GERUND = /^(?:building|working|looking|checking|reviewing|investigating|exploring|examining|analy[sz]ing|reading|searching|running|testing|verifying|trying|preparing|starting|continuing|finishing|waiting|thinking|considering|planning|figuring|digging|scanning|inspecting|evaluating|assessing|debugging|diagnosing|confirming|double-checking|gathering|collecting|drafting|iterating|processing|parsing|loading|fetching|retrying|proceeding)\b/i;

/** A sentence opening with the gerund of the agent's own work, no subject ("Fixing…", "Also updating…"). */
export const WORK_GERUND = /^(?:(?:also|now|still|then|next|first|finally|and)[,]?\s+)?(?!(?:nothing|something|everything|anything|string|thing|during|interesting|amazing|exciting|missing|existing|remaining|following|pending|outstanding|surprising|confusing|concerning|annoying|promising|according|morning|evening|spring|ring|king|ping|pricing|padding|logging|caching|routing|building|setting|settings|testing|mapping|encoding|naming|timing|spacing|styling|tracking|typing|warning|error)\b)[a-z]{3,}ing\b/i;
/** A finite verb after an opening gerund makes it the subject ("Using a map avoids the scan"); participles do not ("the unused variable"). */
export const GERUND_FINITE = /\b(?:is|are|was|were|has|have|had|does|did|do|can|cannot|will|would|should|could|may|might|must|seems?|appears?|means|requires|returns|causes|fails|works|contains|uses|needs|breaks|avoids|prevents|makes|keeps|lets|gives|takes|helps|creates|adds|introduces|violates|leads|results|produces|ensures|reduces|increases|costs|hides|exposes|couples)\b/i;
/** A title ("Clarifying Dependencies and Order"): every word of three letters or more capitalised. */
export const TITLE_CASE = /^(?:[A-Z][\w'-]*|[a-z]{1,3}|&)(?:\s+(?:[A-Z][\w'-]*|[a-z]{1,3}|&))+$/;
/** Where the main clause of a sentence ends: its reason or contrast. */
export const GERUND_CLAUSE_END = /,|;|\s[—–-]\s|\b(?:since|because|so that|rather than|instead of|to avoid|as)\b/i;

/**
 * A rule in the agent's own words ("Never ask for confirmation on next steps", "Always run the linter first"):
 * text of a rule file or guide it writes or quotes. The user's rules come from the user's turns; the document keeps these.
 */
export const PRESCRIBED = /^(?:never|always|(?:do not|don't)(?! forget))\b/i;

/** What the agent expects a change to do, before it is seen to: "This should fix the error", "After these changes, the error should be resolved". */
export const EXPECTATION = /^(?:you (?:should|will) (?:now )?(?:see|be able|notice|get|find)\b|(?:this|that|it|these (?:changes|fixes|updates)|the (?:fix|change|update|new \w+)s?)\s+should\b|after (?:making |applying )?(?:these|this|the) (?:changes?|fix(?:es)?|updates?)\b[^,]*,\s*(?:the \w+ |it |this |everything )?should\b|(?:this|that|it) (?:should|will) (?:now )?(?:fix|resolve|solve|address|correct|handle|work|make)\b)/i;


/**
 * The agent describing an edit before it shows it ("This will add the new `SignalScorer` class…", "These changes will
 * update the references…", "This command will change the permissions…"): what was changed is in the edit and its
 * result, not in the announcement.
 */
export const PLANNED_EDIT =
  /^(?:this|these|(?:this|these|the) (?:changes?|edits?|updates?|modifications?|commands?|patch(?:es)?|diffs?|fix(?:es)?|blocks?|search\/replace blocks?))\s+will\s+(?:also\s+|now\s+|then\s+)?(?:add|remove|update|change|create|modify|replace|rename|move|install|insert|delete|introduce|refactor|set|ensure|make\b[^.]*\b(?:more|less|easier|harder|better|cleaner|simpler|clearer|safer)|allow|implement|convert|restructure|rewrite|reorder|wrap|extract|import|export|define|append|prepend|adjust|apply)\b(?![\s\S]{0,200}?\b(?:because|since|when|if|unless)\b)/i;

/**
 * A coding tool asking the user for files (aider: "the files most likely to need changes are: …", "please add
 * them to the chat"): a request for context, no statement about the code.
 */
export const FILE_REQUEST = /^(?:request|requesting|ask(?:ing)? (?:the user )?for) (?:the |these |those |more |additional |specific |a few |some )*(?:files?|code|contents?)\b|^files? (?:provided|added|shared|received|given)\s*:|\bmost likely to need (?:changes|changing|to (?:be )?(?:edited|changed|modified)) (?:are|is)\s*:|\badd (?:these|those|them|the (?:\w+ )?files?)(?: \w+){0,3} to the chat\b/i;

/**
 * The agent's reasoning about the conversation itself: what the user said or added ("User says: …", "Now they've
 * added `index.ts`"), what it will say back ("I need to ask them for the files", "Explain that it is an index
 * file"), the context it recalls ("Context: we're discussing…"). The user's own words and the files are in the record.
 */
export const CONVERSATION_NARRATION =
  /^(?:(?:so|now|ok(?:ay)?|and)[,]?\s+)?(?:(?:the )?context(?: here)? is (?:that we |about |(?:debugging|discussing|investigating|working on|fixing)\b|we(?:'re| are)\b|the user\b)|(?:the )?user (?:says|said|asks|asked|wants|wanted|has added|added|is asking|is requesting|mentioned|previously|just|now|seems to want|requests?|provided|has provided|shared|has shared|wants me|replied|responded|is saying)\b|(?:the )?user (?:hasn't|has not|didn't|did not)(?: (?:yet|actually|really|even|explicitly))? (?:specified|provided|given|mentioned|said|asked|told|shared|clarified|indicated|explained|requested)\b|the (?:current|latest|last|new|user's|original) (?:request|question|message|prompt) (?:is|was|asks|says|seems)\b|they(?:'ve| have)? (?:say|said|ask|asked|want|added|provided|shared|mention(?:ed)?|are asking|replied)\b|they ask me\b|i (?:need|should|have|want|must) to (?:ask|tell|explain|respond|reply|acknowledge|let (?:them|the user) know|request|point out)\b|i(?:'ll| will) (?:keep it|ask (?:them|the user|for)|respond|reply|explain|acknowledge|let (?:them|the user) know)\b|i previously (?:suggested|asked|said|mentioned|explained)\b|explain (?:that|why|to the user)\b|(?:the )?context(?: from [^:]{0,40})?:\s|this is (?:just )?(?:a|an) (?:greeting|request for|follow-?up|simple question|acknowledg))/i;

/** The agent weighing the user's idea before restating it ("This is an interesting approach - rather than…"): the request says it. */
export const REQUEST_ECHO = /^(?:(?:this|that|it) (?:is|sounds like|seems like|'s) (?:an? |a really |a very )?(?:interesting|good|great|nice|clever|solid|reasonable|smart|excellent|sensible|neat) (?:approach|idea|plan|request|suggestion|change)\b)/i;

/**
 * A user message that only greets or thanks ("hi", "Hello there!", "thanks a lot", "привет"): it asks for nothing,
 * so it is no goal and no line of the request log.
 */
export const GREETING_ONLY =
  /^(?:(?:hi|hello|hey|hiya|howdy|yo|greetings|good (?:morning|afternoon|evening|day)|thanks|thank you|thx|ty|cheers|привет|здравствуй(?:те)?|hola|bonjour|hallo|ciao|olá)(?:\s+(?:there|again|all|everyone|team|so much|a lot|very much|you|friend|buddy|claude|cursor|copilot|gemini|codex))*[\s!.,:;)]*(?:\p{Extended_Pictographic}\s*)*)+$/iu;

/** Whether a message only greets or thanks (asks for nothing: no goal, no request line). */
export function isGreeting(words: string): boolean {
  return GREETING_ONLY.test(words.trim());
}

/** A whole sentence of courtesy: thanks, apology, acknowledgement. */
export const PLEASANTRY_SENTENCE = /^(?:(?:i )?apologi[sz]e\b|(?:you're|you are) (?:welcome|correct|right)\b|thank you for\b|thanks for\b|my apologies\b|i'm sorry\b|sorry (?:about|for)\b|good (?:catch|point|idea|question)\b|that's (?:a )?(?:great|good|fair) (?:point|question|idea)\b|we're making (?:good )?progress|(?:great|good|excellent) progress|(?:we|i)(?:'ve| have) made (?:\w+ )?progress\b|your [^.!?]{1,60}?\b(?:is|are|looks?) (?:\w+ly )?(?:well[- ](?:designed|structured|organi[sz]ed|written|architected|documented|thought[- ]out)|excellent|impressive|great|superb|outstanding|professional)\b)/i;

/** "You're absolutely right - I've been editing the main workspace…", "I apologize, …": the agent conceding the user's point. */
export const CONCEDING = /^(?:(?:you(?:'re| are) (?:absolutely |completely |totally |quite )?(?:right|correct))|(?:i )?apologi[sz]e|my apologies|sorry,|good catch)\b/i;

/**
 * Telling the user what they want ("You want each client to have its own log file", "Great question — you're looking
 * for…"): the agent restating the ask, which the request log keeps in the user's words. Advice in the same form ("you
 * want to avoid `await` in loops") is not.
 */
export const RESTATED_ASK =
  /^(?:question[\s!.,:;—–-]+)?(?:so,? )?(?:you(?:'re| are) (?:looking for|trying to|asking (?:for|about|whether|if|how|me to))|you(?:'d| would) like\b|you want (?!to (?:avoid|use|make sure|keep|ensure|be careful|check|double-check|prefer)\b))/i;

/** Offers and questions to the user: not a fact. */
export const OFFER = /^(?:(?:now,? )?(?:when|if|once) you (?!need\b)|would you like|do you want|shall i|should i|want me to|let me know|if you(?:'d| would)? like|feel free|is there anything|can i help|would it help|i can (?:also |now |then )?(?:help|do|add|create|make|work on|tackle|start|continue|proceed|look into|go through|fix|update|try)|i'd be happy|happy to help|hope this helps|i'll help you|i will help you|i can help)|\b(?:please )?let me know\b|\bif you(?:'re| are) still (?:seeing|encountering|having|getting)\b|\bi(?:'m| am) (?:ready|here|available|standing by) to (?:proceed|help|continue|assist|go on|start|take)\b/i;

// ------------------------------------------------------------------- rules

/** Discourse markers a rule may open with ("Also, never…", "From now on, always…"). */
export const RULE_LEAD = /^(?:(?:and|but|also|so|then|plus|oh and|btw|by the way|ps|p\.s\.|note|important|remember|reminder|please|pls|just|and also|one more thing|from now on|going forward|in (?:the )?future|for (?:this|the rest of this) (?:project|session|task|repo)|as a rule|in general|always remember|constraints?|rules?|requirements?)[,:;—–-]?\s+)+/i;

/** A prescriptive opening addressed to the agent. */
export const RULE_IMPERATIVE =
  /^(?:never|always|do not|don't|dont|do NOT|must|make sure|ensure|be sure to|remember to|only|avoid|keep|use only|no more|no |stop|refrain from|under no circumstances|without|preserve|retain|maintain|respect|stick to|leave (?:(?:the|this|that|these|those|my|our|your) )?\S+ (?:alone|as is|unchanged|intact)|ignore (?!(?:all |any )?(?:previous|prior|above|earlier) (?:instructions|messages|rules)\b)|limit|restrict|prefer|ask (?:me )?before|check with me before|confirm (?:with me )?before|wait for (?:my|me)|don't touch|do not touch|no need to)\b/i;

/**
 * A prescriptive opening in the other languages users of coding agents write in (the corpus has Polish and
 * Russian sessions): always, never, remember to, make sure, you must, do not + an imperative. Only openings that
 * cannot report a state ("nie działa" is "does not work"): a bare negation is left out.
 */
export const RULE_IMPERATIVE_OTHER =
  /^(?:zawsze|nigdy|pamiętaj,?\s+(?:aby|żeby|by|o|że)|upewnij się|musisz|nie wolno|nie (?:używaj|rób|zmieniaj|ruszaj|usuwaj|dotykaj|commituj|modyfikuj)|używaj tylko|всегда|никогда|обязательно|запомни|помни,?\s|нельзя|не (?:используй|делай|трогай|меняй|удаляй|запускай|коммить|пушь|трогайте|меняйте|удаляйте)|immer|niemals|achte darauf|stelle sicher|du musst|bitte (?:keine|nicht|niemals|immer)|siempre|nunca|asegúrate|debes|no (?:uses|hagas|toques|cambies|borres|modifiques)|toujours|jamais|assure-toi|tu dois|n'utilise|ne (?:modifie|touche|supprime|change|utilise)|certifique-se|sempre|não (?:use|altere|mude|apague|toque))(?=[\s,.!:;]|$)/iu;

/** A modal or prohibition addressed to the agent anywhere in the sentence. */
export const RULE_MODAL =
  /\b(?:you|we|it|they|the \w+|claude|agent) (?:must|must not|mustn't|should never|should always|shall not|may not|are not allowed to|is not allowed to|need to always|have to always)\b|\byou (?:do not|don't|will not|won't|should not|shouldn't|may only|can only|are only|(?:never|only)(?! (?:\w+ed|made|did|wrote|ran|got|gave|took|went|said|saw|found|left|kept|put|set|read|built|broke|told|showed|fixed|changed)\b))\b|\bi (?:do not|don't|dont) (?:want|wish)\b|(?<!\b(?:i|we|it|this|that)(?:'ve| have| had)? )\b(?:always|never)\b(?! (?:\w+ed|worked|works|fails|failed|seen|had|been|gotten|got|saw|heard|found|came|went|ran|took|gave|made|knew|thought|did)\b)|\b(?:must never|must always|must not|not allowed|forbidden|prohibited|under no circumstances)\b|\bi (?:do not|don't) want (?:you|it) to\b|\bi want you to (?:always|never|only)\b|\b(?:from now on|going forward)\b|\bi (?:would )?(?:like to )?remind(?:ing)? you\b|\b(?:main|key|golden|standing|core|first) (?:directive|rule)\b|\b(?:without (?:asking|changing|modifying|touching|breaking|removing|deleting))\b/i;

/** A first-person report or a question that merely contains "don't" or "only" is not a rule. */
export const NOT_A_RULE = /^no \w+(?: \w+)? (?:found|available|matches?|matching|results?|such|errors?|issues?|changes?|output|data|response|problems?|longer|more (?:than|results))\b|^(?:i|we)(?: still| just| really)? (?:don't|do not|can't|cannot|didn't|did not|haven't|only)\b(?! want (?:you|it) to| wish\b)|^(?:only|just) (?:\w+ ){0,2}(?:works?|worked|happens?|fails?)\b|^keep (?:going|working|it up|at it)\b|^no(?:pe)?[,.!]?$|^no,? (?:that|this|it)'?s?\b/i;

/**
 * A prescriptive clause inside a sentence, after a comma or "and/but/then": "implement it, ensure to lint the code",
 * "run them in order, but only one at a time", "When editing a file, make sure to indent". Not in a report of what
 * the user or something else did ("I tried it, and never got an answer"), nor an ask about the work at hand ("then
 * ensure these changes are committed").
 */
export const RULE_CLAUSE = /(?:[,;:—–]\s*|\s(?:and|but|then)\s+)(?:please\s+|also\s+|just\s+)?(?:make sure|be sure to|ensure(?: to| that)?(?! (?:that )?(?:these|this|those|the)\b)|always|never|do not|don't|only (?!to\b|if\b|when\b|after\b|because\b)\w+ (?:\w+ )?(?:at a time|one|once)\b)\b/i;
export const REPORT = /^(?:i|we|it|this|that|there|they|he|she)\b(?! (?:want|need|would like) (?:you|it) to\b)/i;

/**
 * The user correcting what the agent does ("you're editing in the main workspace", "you keep adding comments",
 * "you should be in the session repo"): a standing rule said as a reproach, as binding as "don't".
 */
export const RULE_CORRECTION =
  /^(?:(?:no|nope|again|but|still|wait|hey)[,!.]?\s+)?(?:you(?:'re| are)(?: still| again| now| actually)? (?!(?:right|correct|welcome|absolutely|so|quite|totally|exactly|spot|going to|about to|an?|the|my|our|doing (?:great|good|well|fine)|getting (?:there|close)|almost)\b)(?:\w+ing|in|not|on|inside|outside)\b|you(?:'ve| have) been \w+ing\b|you keep \w+ing\b|you should(?:n't| not)? (?:be|have been|stay|work|edit|use|run|keep)\b)/i;

/**
 * A correction that only describes what the agent does ("you're editing in the main workspace"): the rule is
 * its opposite, so the user's words are kept framed as their objection, never as an instruction read cold.
 */
export const REPROACH = /^(?:(?:no|nope|again|but|still|wait|hey)[,!.]?\s+)?(?:you(?:'re| are)|you(?:'ve| have) been|you keep)\b/i;
export const OBJECTED = (words: string): string => `the user objected: "${words}"`;
/** The frame OBJECTED puts around the user's words. */
export const OBJECTION_FRAME = /^the user objected: "(.*)"$/;

/**
 * The user saying that what the agent just reported did not happen: it still fails, it does not open, they
 * still see the error, the agent missed a part ("i still don't see the parentheses", "it's not opening a new
 * tab", "still get list index out of range error", "you missed this part").
 */
export const USER_REFUTES =
  /\bstill\b.*(?:\bnot\b|n't\b|\b(?:isnt|doesnt|dont|didnt|cant|wont|arent|wasnt|werent|havent|hasnt)\b|\b(?:error|errors|blocked|broken|fail\w*|same|issue|problem|wrong|empty|missing)\b)|\b(?:is|are|was|were)(?:n'?t| not) (?:\w+ing|opened|shown|fixed|working|there|visible|right|correct)\b|\b(?:does|do|did)(?:n'?t| not) (?:work|change|fix|help|open|show|appear|run|load|save)\b|\byou (?:missed|forgot|broke)\b|\bthe opposite of\b|\bnothing (?:changed|happens?|happened)\b|\b(?:same|new) (?:error|exception)\b|\bwrong (?:files?|place|dir(?:ectory)?|branch|repo(?:sitory)?|workspace|path)\b|\b(?:i|we) (?:still )?(?:do ?n'?t|do not|can'?t|cannot) see (?:the|those|these|them|your|it)\b(?!(?:\s+\w+){0,2}\s+(?:problems?|issues?|reasons?|need|point|harm|difference)\b)|\b(?:i (?:still )?see|i'm seeing|there (?:are|is) (?:still )?(?:some )?) ?duplicat(?:es?|ed)\b/i;

/**
 * What an agent says to report its change took effect: "This will now only open the new tab…", "✅ Fixed…",
 * "The session error should be resolved", "now works".
 */
export const SUCCESS_CLAIM =
  /\b(?:will now|should now|now (?:works?|opens?|shows?|displays?|handles?|only|uses?|correctly|properly)|should (?:work|fix|resolve|be (?:fixed|resolved|working|gone))|(?:is|are|has been|have been) (?:now )?(?:fixed|resolved|working|gone)|successfully|works? (?:now|correctly|fine|as expected)|(?:this|these) (?:changes?|modifications?|fix(?:es)?) (?:will|should|ensures?|makes?)|you should (?:now )?see)\b|✅/i;

// -------------------------------------------------------------- agent cues

/** A choice said in so many words: the one list the sentence classes and the protected decisions (state.ts) share. */
export const CHOICE_CUE = /\b(?:I'll use|I will use|we'll use|let's use|let's go with|going with|decided to|switch(?:ing)? to|instead of|opt(?:ing)? for|I chose|we chose)\b/i;

/**
 * What the thing being built will do, said of it by name ("The `fid` claim will be injected inside the refresh
 * handler…", "When rotate:true is configured, the resolver will warn if isRevoked is missing", "F3 will be addressed
 * alongside F1 because…"): a design choice, when it names the code (an identifier) or gives its reason ("because…",
 * "so the…"), which then backs the choice and makes no finding. "The test suite will catch regressions" names neither.
 * Not a consequence ("…will become invalid", "this will cause…"), not what existing code does for the user ("if you
 * pass `--repo`, it will look for…"), not what a statement means ("This change means that … will be buffered").
 */
export const DESIGNED_BEHAVIOUR =
  /^(?!(?:so )?(?:if|when|once|whenever) (?:you|the user)\b)(?![^.?!]*\b(?:means?|meaning|suggests?|indicates?|implies|probably|likely|might|may)\b)(?!(?:i|we|you|it|this|that|these|those|they|there|which|what|here)\s)[^.?!]{0,80}?\b(?:will|shall)\s+(?:now\s+|also\s+|instead\s+|then\s+|only\s+|first\s+)?(?!(?:be\s+(?:able|a|an|the|very|more|less|much|in|on|at|available|visible|lost|gone|invalid|empty|slow|fast|expensive|difficult|hard|easy|possible|necessary|needed|required|broken|fixed|fine|ok|okay|done|ready|useful|helpful)\b)|become|cause|fail|break|result|happen|need|take|remain|stay|appear|seem|depend|look|show|get|see|notice|find|have|not|never|no longer|still|likely|probably|continue|keep failing|stop working|work)\w+/i;

/** A sentence naming code (a quoted name, a camelCase or snake_case identifier) or giving a reason. */
export const NAMES_CODE_OR_REASON = /`|\b[a-z]+[A-Z]\w*|\b[a-z]+_\w+|\b(?:[Bb]ecause|[Ss]ince|so (?:that|the)|to (?:avoid|prevent|ensure))\b/;

export const AGENT_CUES: readonly Cue[] = [
  // findings: a discovered truth
  { cls: 'finding', weight: 3.5, pattern: DESCRIBED_INSTEAD },
  { cls: 'finding', weight: 3.5, pattern: MISTAKEN_INSTEAD },
  { cls: 'finding', weight: 3, pattern: /\b(?:root cause|the (?:real |actual |main |underlying |core |key |root |primary )?(?:issue|problem|bug|cause|culprit|reason) (?:is|was|here is|seems to be|appears to be)|turns out|it turns out|is caused by|was caused by|caused by|this (?:means|explains|confirms|shows)|which (?:means|explains)|the reason (?:is|was|why)|i (?:found|discovered|confirmed|noticed|determined|verified) (?:that|the|a|it)|found (?:that|the issue|the problem)|confirmed (?:that|it)|(?:this|that) is (?:why|because))\b/i },
  { cls: 'finding', weight: 2, pattern: /\b(?:does(?:n't| not) support|is(?:n't| not) supported|not supported|only supports|requires|depends on|is set to|are set to|is configured|defaults to|is (?:missing|absent|empty|null|undefined|hardcoded|hard-coded)|are missing|(?:does(?:n't| not)|do(?:n't| not)) exist|is(?:n't| not) (?:installed|running|listening|available|reachable|set|defined|exported|called|used)|listens on|points to|resolves to|returns|expects|overrides|conflicts with|is (?:still )?(?:correct|working|fine|valid|up to date)|works (?:correctly|fine|as expected)|are (?:now )?(?:passing|failing)|pass(?:es|ed)?(?: successfully)?:|because|due to|since the|so the)\b/i },
  { cls: 'finding', weight: 1.5, pattern: /\b\d+(?:\.\d+)?\s*(?:tests?|passed|passing|failed|failures?|errors?|warnings?|files?|lines?|records?|entries|items|commits?|ms|s|sec|seconds?|minutes?|mb|kb|gb|%|bytes?|tokens?|queries|requests|packets?|hosts?)\b|\bv?\d+\.\d+(?:\.\d+)?\b|\b(?:version|port|exit code|status code|http) \d+/i },
  { cls: 'finding', weight: 1, pattern: /`[^`\n]{2,80}`[^.]*\b(?:is|are|was|were|has|have|uses|contains|stores|calls|reads|writes|drops|ignores|runs|causes|returns|means|requires|listens|points|fails|breaks|blocks|overrides|conflicts|lacks|handles|creates|checks|expects|generates|produces|shows|defines|accepts)\b|\b(?:is|are|was|were|has|uses|contains|stores|lacks)\b[^.]*`[^`\n]{2,80}`/i },
  // An agent's own label on its line says what the line is ("Finding: …", "Root cause: …").
  // A label alone ("Root Cause:" over a list) states nothing: its items do.
  { cls: 'finding', weight: 4, pattern: /^(?:root cause|cause|problem|issue|finding|findings|result|results|diagnosis|observation|key (?:finding|insight)|analysis)\s*:\s*\S/i },
  { cls: 'finding', weight: 1, pattern: /^(?:status|the fix works|verified|confirmed)\s*:/i },
  // An interpretation of what was seen ("This could mean that it types the previous transcription instead of the
  // current one"): found, whatever choice words it quotes.
  { cls: 'finding', weight: 4, pattern: /^(?:so )?(?:this|that|which|it) (?:(?:could|may|might|would|likely|probably|clearly|then) )?(?:means?|suggests?|indicates?|implies|explains?)\b(?!(?: that)? (?:we|i|you)(?:'ll| will| should| need| must| have to)\b)/i },
  // An outcome observed: what a run or a check showed ("now works as intended", "this confirms the issue").
  { cls: 'finding', weight: 3, pattern: /^(?!verified\b)[^.?!]*\b(?:now works|works as (?:intended|expected)|(?:this|which|that) (?:confirms|(?:likely |probably |clearly )?means))\b/i },
  // failures: what did not work
  { cls: 'failure', weight: 3, pattern: /\b(?:didn't work|did not work|doesn't work|does not work|won't work|will not work|isn't working|is not working|not working|still (?:fails|failing|broken|getting|seeing|doesn't|does not|not|the same|shows|returns|times out|hangs)|no luck|that (?:failed|broke)|(?:this|that|it) (?:failed|broke)|gave up|giving up|abandon(?:ed|ing)?|dead end|ruled out|not the (?:issue|cause|problem)|reverted?|rolling back|rolled back|doesn't seem to (?:work|help|fix)|didn't (?:help|fix|change)|did not (?:help|fix|change)|made (?:it|things) worse|(?:seems|appears) (?:to be|there (?:was|is|are)|that there (?:was|is)) (?:an? |some |still )?(?:issue|problem|mistake|error|bug|something wrong)|something (?:is |went )?wrong|(?:issues?|errors?|problems?) (?:that need|to be fixed|remain)|(?<!\b(?:fix(?:ed|es|ing)?|resolv(?:ed|es|ing)|address(?:ed|es|ing)|correct(?:ed|s|ing)?)\b[^.;:]{0,40})test failures|(?:in|into) the wrong (?:directory|workspace|place|file)|getting in the way|(?:i'm|i am|we're|we are) (?:encountering|running into|hitting|seeing) (?:an? |the |some |this )?(?:issue|problem|error|bug)|still (?:fork|permission|auth|connection|timeout|import|type|build|test) errors?)\b/i },
  { cls: 'failure', weight: 2, pattern: /\b(?:(?:command|build|test|tests|install|installation|push|commit|request|query|connection|edit|attempt|import|upload|migration|deploy(?:ment)?|script|compilation|it|this|that) (?:failed|fails|is failing|timed out|times out|crashed|hangs|was (?:rejected|blocked|refused|denied))|(?:couldn't|could not|can't|cannot|unable to|was unable to) (?:find|connect|start|open|read|write|load|resolve|import|install|build|run|access|sign|push|commit|bind|create|parse)|(?:got|getting|hit|hitting|returns?|returned|throws?|threw|raised?) (?:an? |the |this |same |another )?(?:error|exception|\d{3})|timed out|permission denied|access denied|syntax error|no such file)\b/i },
  // An attempt that came to nothing: "The attempt to inject the `id` command did not yield any additional output".
  { cls: 'failure', weight: 2, pattern: /\b(?:did not|didn't|does not|doesn't) (?:yield|produce|reveal|lead (?:us )?to|help|make (?:a|any) difference|have (?:any|an|the desired) effect|change anything)\b/i },
  { cls: 'failure', weight: 1, pattern: /\b(?:failed|fails|failing|failure|not found|refused|crash(?:es|ed)?|broken|exception|traceback|segfault|stuck|blocked)\b/i },
  { cls: 'failure', weight: 1, pattern: /^(?:❌|⚠️?|✗|error\b|warning\b|failed\b|failure\b)/i },
  // The same classes said in the other languages agents write in with Latin letters (Polish, German, Spanish, French,
  // Portuguese): a cause found ("Problem polega na tym, że…") and a choice ("Użyjemy FastMCP zamiast…", "Zdecydowałem
  // się na…"). An agent's prose in other scripts is not read as statements yet (its words are not counted as prose).
  { cls: 'finding', weight: 3, pattern: /(?:^|[\s(,])(?:problem polega na|przyczyną (?:jest|było)|okazało się|das problem (?:ist|war)|es stellt sich heraus|die ursache (?:ist|war)|el problema (?:es|era)|resulta que|la causa (?:es|era)|le problème (?:est|était)|il s'avère|la cause (?:est|était)|o problema (?:é|era)|a causa (?:é|era))(?=[\s,.:;!]|$)/iu },
  { cls: 'decision', weight: 3, pattern: /(?:^|[\s(,])(?:zamiast|statt|anstatt|en (?:lugar|vez) de|au lieu de|em vez de|zdecydowa(?:łem|łam|liśmy)|wybra(?:łem|łam|liśmy)|entschieden|decid(?:í|imos)|eleg(?:í|imos)|(?:j'ai|nous avons) (?:décidé|choisi)|decidi(?:mos)?|escolhi)(?=[\s,.:;!]|$)/iu },
  // decisions: a choice made
  { cls: 'decision', weight: 3, pattern: new RegExp(`${CHOICE_CUE.source}|^(?:my|our) (?:\\w+ )?(?:plan|intention) (?:now |here )?is to\\b|^(?:the )?plan:\\s|\\b(?:we will use|go with|decided on|decision:|chose to|opt(?:ed|ing)? (?:for|to)|the (?:best |right |better |simplest |cleanest |correct )?(?:approach|solution|plan|fix|strategy|option) (?:is|will be|here is|would be)|the plan is to|better (?:approach|option|to)|best (?:approach|option|practice|way)|recommend(?:ed|ation)?(?![a-z])|prefer(?:red|ence|abl[ey])?\\b|switched to|rather than|in favou?r of|let's call it|we'll call it|we'll name|will be (?:stored|kept|named|called|handled|used|moved|placed)|should be (?:stored|kept|named|called|handled|moved|placed)|solution:|fix:|approach:|strategy:|(?:the|my|our) decision (?:is|was)\\b)`, 'i') },
  { cls: 'decision', weight: 1.5, pattern: /\b(?:we(?: should| will|'ll| can) (?:use|store|keep|move|add|switch|replace|rename|extract|change|implement|make|create|split|merge|drop|remove|avoid)|i(?:'ll| will) (?:use|store|keep|switch|replace|rename|extract|split|merge|drop|avoid)|(?:will|would) (?:be better|work better|be simpler|be cleaner)|so that|to avoid|to prevent|to ensure|which (?:avoids|prevents|ensures|keeps))\b/i },
  { cls: 'decision', weight: 1.5, pattern: /^(?!(?:i|we|let's|let me|you)\b)(?![^.?!]*\b(?:means?|meaning|suggests?|indicates?|implies)\b)[^.?!]{0,80}\b(?:will|shall) (?:be (?:\w+ed|moved|kept|set|made)|expose|inject|wire|embed|store|keep|preserve|handle|use|call|register|reject|accept|return|wrap|delegate|replace|own)\b/i },
  { cls: 'decision', weight: 2, pattern: DESIGNED_BEHAVIOUR, also: NAMES_CODE_OR_REASON },
  { cls: 'decision', weight: 1.5, pattern: /\b(?:we|i) need to (?:modify|change|amend|rewrite|replace|switch|move|use|exclude|restructure|bypass|skip|disable|enable)\b|\b(?:is|are|seems|looks) (?:the )?(?:simpler|cleaner|more robust|better|safer|best path)\b|\bdeferred\b|\bcan handle\b|\bmay be added\b/i },
  // plans: a next step beyond the immediate action
  { cls: 'plan', weight: 3, pattern: /\b(?:next steps?(?: (?:is|are|would be|will be))?:?|the (?:next|first) step|remaining(?: work| tasks| items)?:|still (?:need|needs|have|has) to|still to (?:do|be)|left to do|to ?do:|TODO:|follow[- ]up|not (?:yet|done yet) (?:implemented|done|tested|verified)|we(?:'ll| will) (?:then|next|also need|need)|after (?:that|this),? (?:we|i)|then (?:we|i)(?:'ll| will| can| should)|once (?:that|this) is done|we (?:still )?need to (?:\w+ly )?(?:add|update|implement|write|create|fix|migrate|handle|support|test|refactor|make|change|remove|move|document|verify|mock|rewrite|clean|rename|split|extract)|it's important to|don't forget to|remember to|should also|will (?:also )?need to|pending:?|future (?:work|improvements?))\b/i },
  { cls: 'plan', weight: 2, pattern: /^(?:then|next|finally|afterwards|after that|also),?\s+(?:we(?:'ll| will| can| should)? |i(?:'ll| will)? )?(?:add|update|implement|write|create|fix|migrate|handle|support|test|refactor|change|remove|move|document|verify|ensure|run|modify|rewrite|clean|rename|deploy|configure|install|replace|extract|integrate)\b/i },
  { cls: 'plan', weight: 1, pattern: /^(?:add|update|implement|write|create|fix|migrate|handle|support|test|refactor|change|remove|move|document|verify|ensure|run|stage|commit|push|deploy|configure|install|replace|rename|extract|integrate|investigate)\b/i },
  // changes: work reported done
  { cls: 'change', weight: 3, pattern: /^(?:(?:i|we)(?:'ve| have)|i|we|now)?\s*(?:successfully |also |just |now )?(?:updated|added|created|fixed|modified|changed|removed|deleted|renamed|implemented|refactored|moved|replaced|wrote|written|rewrote|set up|configured|installed|enabled|disabled|committed|pushed|improved|extracted|migrated|converted|cleaned up|merged|restored|reverted|applied|introduced|exported|imported|generated|built|deployed|documented|integrated|adjusted|corrected|simplified|split|wrapped|made|enhanced|optimized|streamlined|expanded|extended|upgraded|reorganized|restructured|consolidated|centralized|hardened|standardized|unified|reworked)\b/i },
  { cls: 'change', weight: 2, pattern: /\b(?:has been|have been|was|were|is now|are now) (?:successfully )?(?:updated|added|created|fixed|modified|changed|removed|deleted|renamed|implemented|refactored|moved|replaced|written|configured|installed|enabled|disabled|committed|pushed|improved|extracted|migrated|converted|cleaned up|merged|restored|applied|generated|built|deployed|documented|integrated|resolved|enhanced|optimized|expanded|extended|upgraded|reorganized|restructured|consolidated)\b|^✅|\bnow (?:uses|supports|handles|returns|shows|works|includes|has|reads|writes|stores|accepts|checks|runs)\b/i },
];

/** A choice that names no more than "a different approach": the sentence after it says which (fold joins them). */
export const VAGUE_CHOICE = /\b(?:a different|another|an alternative|a new|a simpler|a cleaner|a better|the following) (?:approach|way|strategy|tack|plan|route|solution|fix)\b[^.!?:]{0,20}[.:!]?\s*$/i;
