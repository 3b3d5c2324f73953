name := "gantry-scheduler"
organization := "dev.gantry"
version := "2.4.1"
scalaVersion := "2.13.12"

libraryDependencies ++= Seq(
  "com.typesafe.scala-logging" %% "scala-logging" % "3.9.5",
  "ch.qos.logback" % "logback-classic" % "1.4.14",
  "org.scalatest" %% "scalatest" % "3.2.17" % Test
)
