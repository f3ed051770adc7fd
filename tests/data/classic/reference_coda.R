# Reference values of R coda (and posterior) for the chains in this folder.
# Run from the repository root after make_fixtures.py:
#   Rscript tests/data/classic/reference_coda.R
# Writes tests/data/classic/reference_R.csv: fixture, stat, chain (0: all chains),
# param (1-based column), value (17 significant digits; NA where coda gives none).
suppressPackageStartupMessages({library(coda); library(posterior)})
here <- "tests/data/classic"
fixtures <- c("ar1_long", "odd_length", "nonstationary", "not_converged", "eight_schools")
rows <- list()
add <- function(fixture, stat, chain, values) {
  values <- as.numeric(values)
  rows[[length(rows) + 1]] <<- data.frame(fixture = fixture, stat = stat, chain = chain,
                                          param = seq_along(values), value = sprintf("%.17g", values))
}
for (f in fixtures) {
  d <- read.csv(file.path(here, paste0(f, ".csv")), check.names = FALSE)
  chains <- sort(unique(d$chain))
  vars <- setdiff(names(d), c("chain", "draw"))
  ml <- mcmc.list(lapply(chains, function(i) mcmc(as.matrix(d[d$chain == i, vars, drop = FALSE]))))
  for (burn in c(TRUE, FALSE)) {
    g <- gelman.diag(ml, autoburnin = burn)
    tag <- if (burn) "gelman" else "gelman_all"
    add(f, paste0(tag, "_psrf"), 0, g$psrf[, 1])
    add(f, paste0(tag, "_upper"), 0, g$psrf[, 2])
    add(f, paste0(tag, "_mpsrf"), 0, if (is.null(g$mpsrf)) NA else g$mpsrf)
  }
  add(f, "effectiveSize", 0, effectiveSize(ml))
  add(f, "batchSE", 0, batchSE(ml))
  add(f, "rejectionRate", 0, rejectionRate(ml))
  gw <- geweke.diag(ml)
  hw <- heidel.diag(ml)
  rl <- raftery.diag(ml)
  for (i in seq_along(chains)) {
    add(f, "geweke_z", i, gw[[i]]$z)
    h <- unclass(hw[[i]])
    for (col in colnames(h)) add(f, paste0("heidel_", col), i, h[, col])
    r <- rl[[i]]$resmatrix
    if (is.matrix(r)) {
      for (col in colnames(r)) add(f, paste0("raftery_", col), i, r[, col])
    } else {
      add(f, "raftery_error_nmin", i, as.numeric(r[2]))
    }
    add(f, "rejectionRate", i, rejectionRate(ml[[i]]))
    s <- spectrum0.ar(ml[[i]])
    add(f, "spectrum0_spec", i, s$spec)
    add(f, "spectrum0_order", i, s$order)
  }
  arr <- as_draws_array(array(unlist(lapply(chains, function(i) as.matrix(d[d$chain == i, vars]))),
                              dim = c(sum(d$chain == 1), length(vars), length(chains)))[, , , drop = FALSE] |>
                        aperm(c(1, 3, 2)))
  for (p in c(0.05, 0.5, 0.95)) {
    add(f, sprintf("posterior_ess_quantile_%g", p), 0,
        sapply(seq_along(vars), function(j) ess_quantile(extract_variable_matrix(arr, variables(arr)[j]), probs = p)))
    add(f, sprintf("posterior_mcse_quantile_%g", p), 0,
        sapply(seq_along(vars), function(j) mcse_quantile(extract_variable_matrix(arr, variables(arr)[j]), probs = p)))
  }
}
out <- file.path(here, "reference_R.csv")
con <- file(out, "w")
writeLines(sprintf("# %s; coda %s; posterior %s", R.version.string, packageVersion("coda"),
                   packageVersion("posterior")), con)
write.csv(do.call(rbind, rows), con, row.names = FALSE, quote = FALSE)
close(con)
