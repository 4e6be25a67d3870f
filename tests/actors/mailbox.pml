/* The runtime's mailbox protocol (quotactor/actors/runtime.py; docs/concurrency.md,
   invariants 1, 3, 4 and 8): an actor's inbox, claim and stop flag change only in steps taken
   under its mailbox lock, each an atomic block here. Two senders each send PER messages, each
   either handled at once on the sender's thread (an idle actor, claimed) or posted (handed to
   the pool when nobody held the actor); a third sends the stop. Checked: one holder at a time,
   and at the end every message handled or failed with ActorStopped, the inbox empty and the
   actor unclaimed. */

#define PER 2

mtype = { MSG, STOP };
chan inbox = [2 * PER + 1] of { mtype };
bool claimed = false;
bool stopped = false;
byte holders = 0;
byte handled = 0;
byte failed = 0;

/* the holder handles one message; a stop fails everything queued, in the same locked step
   that sets the flag (`_halt`) */
inline handle(m) {
  holders++;
  assert(holders == 1);
  if
  :: m == STOP ->
     atomic {
       stopped = true;
       do
       :: nempty(inbox) -> inbox?_; failed++
       :: empty(inbox) -> break
       od
     }
  :: else -> handled++
  fi;
  holders--
}

/* `_finish`: the next message, or the release, in one locked step */
inline finish() {
  do
  :: atomic {
       if
       :: empty(inbox) -> claimed = false; got = false
       :: nempty(inbox) -> inbox?m; got = true
       fi
     };
     if
     :: got -> handle(m)
     :: else -> break
     fi
  od
}

proctype pool() {
  mtype m; bool got;
  finish()
}

/* `_post`: queue, and claim for the pool if nobody holds the actor, in one locked step; a
   stopped actor fails the message */
inline post(msg) {
  atomic {
    if
    :: stopped -> failed++; scheduled = false
    :: else ->
       inbox!msg;
       if
       :: !claimed -> claimed = true; scheduled = true
       :: else -> scheduled = false
       fi
    fi
  };
  if
  :: scheduled -> run pool()
  :: else -> skip
  fi
}

proctype sender() {
  mtype m; bool got, mine, scheduled;
  byte sent = 0;
  do
  :: sent < PER ->
     sent++;
     atomic {  /* `_claim`: an idle actor (not held, not stopped) */
       if
       :: !claimed && !stopped -> claimed = true; mine = true
       :: else -> mine = false
       fi
     };
     if
     :: mine -> handle(MSG); finish()
     :: else -> post(MSG)
     fi
  :: sent == PER -> break
  od
}

proctype stopper() {
  mtype m; bool got, mine, scheduled;
  post(STOP)
}

init {
  atomic { run sender(); run sender(); run stopper() };
  (_nr_pr == 1) ->
  assert(empty(inbox) && !claimed && stopped && handled + failed == 2 * PER)
}
