module github.com/quorumkv/quorumkv

go 1.21
