/* Counts the words of the files named on the command line and prints the
   ten most frequent with their counts, then the number of words and a
   digest of them (so that every word read shows in the output): the
   staging harness's example workload (configs/workloads/example.yaml). */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TABLE_SIZE 65536
#define MAX_WORD 64

struct entry {
  char word[MAX_WORD];
  long count;
};

static struct entry table[TABLE_SIZE];
static unsigned long words, digest;

static unsigned long hash(const char *s) {
  unsigned long h = 5381;
  while (*s) h = h * 33 + (unsigned char)*s++;
  return h;
}

static void add(const char *word) {
  const unsigned long h = hash(word);
  unsigned long i = h % TABLE_SIZE;
  words++;
  digest = digest * 31 ^ h;
  while (table[i].count != 0 && strcmp(table[i].word, word) != 0)
    i = (i + 1) % TABLE_SIZE;
  if (table[i].count == 0) strcpy(table[i].word, word);
  table[i].count++;
}

static int by_count(const void *a, const void *b) {
  const struct entry *x = a, *y = b;
  if (x->count != y->count) return x->count < y->count ? 1 : -1;
  return strcmp(x->word, y->word);
}

int main(int argc, char **argv) {
  for (int f = 1; f < argc; f++) {
    FILE *in = fopen(argv[f], "r");
    if (!in) {
      fprintf(stderr, "wordfreq: cannot open %s\n", argv[f]);
      return 2;
    }
    char word[MAX_WORD];
    int len = 0, c;
    while ((c = fgetc(in)) != EOF) {
      if (isalpha(c) && len < MAX_WORD - 1) {
        word[len++] = (char)tolower(c);
      } else if (len > 0) {
        word[len] = '\0';
        add(word);
        len = 0;
      }
    }
    if (len > 0) {
      word[len] = '\0';
      add(word);
    }
    fclose(in);
  }
  qsort(table, TABLE_SIZE, sizeof table[0], by_count);
  for (int i = 0; i < 10 && table[i].count > 0; i++)
    printf("%ld %s\n", table[i].count, table[i].word);
  printf("%lu words, digest %016lx\n", words, digest);
  return 0;
}
