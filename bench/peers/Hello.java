/** Start-up probe for bench/peers/run.sh: the smallest program that still runs main. */
public class Hello { public static void main(String[] a) { System.out.println("hello"); } }
