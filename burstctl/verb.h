/*
 * verb.h - finding burstctl's verb among its options, for the verbs that
 * parse their own options (attest, accept, bless).
 */
#ifndef BURST_CTL_VERB_H
#define BURST_CTL_VERB_H

/*
 * The index of the verb in argv: the first word that is neither an option
 * nor an option's value (a "--" ends the options); -1 if there is none.
 * The long options named in long_valued (without "--"; NULL-terminated) and
 * the short option letters in short_valued take a value, unless it is
 * attached (--name=VALUE, -cVALUE).
 */
int ctl_find_verb(int argc, char **argv, const char *short_valued, const char *const *long_valued);

#endif
