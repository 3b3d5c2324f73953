module github.com/stratafs/strata

go 1.22
